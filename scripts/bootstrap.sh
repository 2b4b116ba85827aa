#!/usr/bin/env bash
# Install what the runner needs, idempotently: a virtualenv in .venv with the package, its
# test tools and the docs site's builder (MkDocs), and the Delta Lake jars from Maven Central (cached under .cache/jars).
# A second run only checks: it reinstalls when pyproject.toml changed and makes no network call.
# Arguments name extra sets of dependencies to add (`bash scripts/bootstrap.sh s3`: boto3 and
# the local object store, for targets on s3a://); the plain set-up installs none of them.
set -euo pipefail
cd "$(dirname "$0")/.."

for tool in python3 java mvn; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "error: '$tool' is not on PATH. The runner needs Python 3.11+, Java 17 and Maven." >&2
    echo "       On Debian: apt-get install -y python3-venv openjdk-17-jre-headless maven" >&2
    exit 1
  fi
done

# Debian's chromium renders the docs site in tests/browser (driven by Playwright, which then
# never downloads a browser of its own). Installed once, when missing.
if [ ! -x /usr/bin/chromium ]; then
  echo "==> installing chromium (apt-get) for the docs-site browser test"
  sudo_cmd=""
  if [ "$(id -u)" -ne 0 ]; then sudo_cmd="sudo"; fi
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq chromium >/dev/null
fi

if [ ! -x .venv/bin/python ]; then
  echo "==> creating .venv"
  python3 -m venv .venv
fi

# uv (from PyPI, into .venv) installs the ~130 packages in parallel: 23 s where pip took 38
# from a warm cache; the package is the same editable install either way. Unlike pip, uv
# leaves the packages uncompiled unless asked: where PYTHONDONTWRITEBYTECODE is set, Python
# then compiles every module it imports on each command (2 s of a `runner run`'s start).
UV_VERSION=0.13.9
UV_INSTALL="uv pip install --quiet --compile-bytecode"
install_extras() {
  .venv/bin/python -m pip install --quiet "uv==$UV_VERSION"
  .venv/bin/$UV_INSTALL --python .venv/bin/python -e ".[$1]"
}

# a new pyproject.toml, or a new way of installing, installs again
stamp=.venv/.installed-$( (cat pyproject.toml; echo "$UV_VERSION $UV_INSTALL") | sha256sum | cut -c1-16)
if [ ! -f "$stamp" ]; then
  echo "==> installing the runner and its dependencies into .venv (first time: a few minutes)"
  # the extras asked for go into the same run: a second run resolves everything again
  install_extras "$(IFS=,; echo "test,docs${*:+,$*}")"
  rm -f .venv/.installed-*
  touch "$stamp"
  for extra in "$@"; do touch "$stamp-$extra"; done
fi
for extra in "$@"; do
  if [ ! -f "$stamp-$extra" ]; then
    echo "==> installing the '$extra' extra into .venv"
    install_extras "$extra"
    touch "$stamp-$extra"
  fi
done

# The runner's own modules, compiled once here: the package is installed editable, so pip does
# not compile it, and where PYTHONDONTWRITEBYTECODE is set Python would compile every module
# again on each `runner` command (~70 ms of a `runner lint`). Up-to-date files are skipped.
.venv/bin/python -m compileall -q runner

echo "==> Delta Lake jars"
.venv/bin/python -c "
from runner.spark.session.jars import delta_coordinates, resolve_jars
jars = resolve_jars(delta_coordinates())
print(f'    {len(jars)} jars in {jars[0].parent}')
"
