"""Copy sample event files into a landing directory, oldest first.

Spark's file source takes files in modification-time order; a fresh git checkout gives all
files about the same time, so we set each copy's time from its sorted position.
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from pathlib import Path


def stage(source: Path, landing: Path) -> list[Path]:
    landing.mkdir(parents=True, exist_ok=True)
    base = time.time() - 3600
    staged = []
    for position, file in enumerate(sorted(source.glob("*.json"))):
        copy = landing / file.name
        shutil.copyfile(file, copy)
        os.utime(copy, (base + position, base + position))
        staged.append(copy)
    return staged


if __name__ == "__main__":
    files = stage(Path(sys.argv[1]), Path(sys.argv[2]))
    print(f"==> landed {len(files)} files of order events in {sys.argv[2]}")
