"""project.yml's settings for a run, beside its models: the target a command runs on
(``targets:``, ``default_target``) and the lint settings (``lint:``).

``runner.project.load`` reads them; every error names project.yml and the line.
"""

from __future__ import annotations

import re
from pathlib import Path

from runner.choices import is_one_of
from runner.errors import ConfigError
from runner.secrets import render_env_vars
from runner.specs.catalog import CATALOG_KEYS, CATALOG_TYPES, JDBC_DRIVERS, CatalogSpec
from runner.specs.lint import LINT_SEVERITIES, LintSettings, LintSeverity
from runner.specs.target import DEFAULT_CONNECT_RETRY_SECONDS, TargetSpec
from runner.storage import Location, parse_location
from runner.streams import conf_value
from runner.target_address import parse_master, parse_remote
from runner.yaml_loader import YamlMap, check_keys, untemplated

DEFAULT_TARGET = "local"  # the target of a project.yml with no targets: (local[*], target/local)
# The keys each target may set (runner/yaml_loader.py checks them).
TARGET_KEYS = (
    "master",
    "remote",
    "warehouse",
    "checkpoints",
    "spark_conf",
    "connect_retry_seconds",
    "catalog",
)
_RULE_CODE = re.compile(r"[A-Z]+[0-9]+")


# -- targets -------------------------------------------------------------------------------


def load_target(doc: YamlMap, root: Path, requested: str | None) -> TargetSpec:
    """The target ``requested`` (``--target``), else project.yml's ``default_target``, else the
    implicit one; its paths resolved under ``root`` and its spark_conf's env_var() marked."""
    targets = doc.child("targets")
    name = requested or doc.get("default_target") or _implicit_target(doc, targets)
    if name == DEFAULT_TARGET and not targets:
        targets = _default_targets(doc)  # no targets: a local one with the default paths
    if name not in targets:
        raise ConfigError(
            f"no target named '{name}' in project.yml",
            file=doc.file,
            line=targets.line if requested else doc.line_of("default_target"),
            hint=f"targets defined: {', '.join(targets) or '(none)'}",
        )
    for each in targets:
        check_keys(targets.child(each), TARGET_KEYS, f"target '{each}'")
    spec = targets.child(name)
    spark_conf = spec.child("spark_conf")
    conf = {
        str(k): render_env_vars(
            conf_value(v),
            what=f"spark_conf {k}",
            file=spark_conf.file,
            line=spark_conf.line_of(k),
        )
        for k, v in spark_conf.items()
    }
    master, remote = _target_endpoint(spec, name)
    if master.startswith("k8s://"):
        _check_kubernetes_conf(spec, name, conf)
    return TargetSpec(
        name=name,
        master=master,
        remote=remote,
        warehouse=_target_path(spec, "warehouse", f"target/{name}/warehouse", root),
        checkpoint_root=_target_path(spec, "checkpoints", f"target/{name}/checkpoints", root),
        spark_conf=conf,
        conf_file=spark_conf.file,
        conf_lines={str(k): spark_conf.line_of(k) for k in spark_conf},
        catalog=_target_catalog(spec, name),
        connect_retry_seconds=_connect_retry_seconds(spec, name, remote),
    )


def _implicit_target(doc: YamlMap, targets: YamlMap) -> str:
    """The target when neither --target nor default_target names one: ``local`` (also when no
    target is declared), or the only one declared."""
    if not targets or DEFAULT_TARGET in targets:
        return DEFAULT_TARGET
    if len(targets) == 1:
        return str(next(iter(targets)))
    raise ConfigError(
        f"project.yml declares targets {', '.join(map(str, targets))} and no default_target",
        file=doc.file,
        line=targets.line,
        hint="set default_target: NAME in project.yml, or pass --target NAME",
    )


def _default_targets(doc: YamlMap) -> YamlMap:
    """``targets: {local: {}}``: master local[*], warehouse and checkpoints under target/local."""
    targets = doc.child("targets")  # empty, located at project.yml
    targets[DEFAULT_TARGET] = targets.child(DEFAULT_TARGET)
    return targets


def _target_path(spec: YamlMap, key: str, default: str, root: Path) -> Location:
    """``warehouse`` / ``checkpoints``: a path relative to the project, or a URI on object
    storage (``s3a://bucket/path``); not templated."""
    hint = (
        "declare one target per environment (targets: {dev: ..., prod: ...}) and choose it "
        "with --target"
    )
    return parse_location(untemplated(spec, key, default, hint), root)


def _target_endpoint(spec: YamlMap, name: str) -> tuple[str, str | None]:
    """Validated ``master`` (local[*] or spark://HOST:PORT) or ``remote`` (sc://HOST:PORT)."""
    if "master" in spec and "remote" in spec:
        raise ConfigError(
            f"target '{name}' sets both master and remote: a target runs Spark either through a "
            "master (local[*], spark://HOST:PORT) or on a Spark Connect server (sc://HOST:PORT)",
            file=spec.file,
            line=spec.line_of("remote"),
        )
    key = "remote" if "remote" in spec else "master"
    value = str(spec.get(key, "local[*]"))
    try:
        if key == "remote":
            parse_remote(value)
            return "", value
        parse_master(value)
    except ValueError as exc:
        raise ConfigError(
            f"target '{name}': {exc}", file=spec.file, line=spec.line_of(key)
        ) from None
    return value, None


def _target_catalog(spec: YamlMap, name: str) -> CatalogSpec | None:
    """``catalog: {type: hive, url: jdbc:postgresql://..., user:, password:}``: a shared Hive
    metastore; absent or ``type: in-memory``: the session's own catalog (None)."""
    if "catalog" not in spec:
        return None
    catalog = spec.child("catalog")
    what = f"target '{name}': catalog"
    check_keys(catalog, CATALOG_KEYS, what)
    kind = catalog.get("type")
    if not is_one_of(kind, CATALOG_TYPES):
        raise ConfigError(
            f"{what}: type must be one of {', '.join(CATALOG_TYPES)}, got {kind!r}",
            file=catalog.file,
            line=catalog.line_of("type"),
            hint="type: hive keeps tables in a shared Hive metastore (docs/deploy.md)",
        )
    if kind == "in-memory":
        if len(catalog) > 1:
            raise ConfigError(
                f"{what}: type in-memory takes no other key",
                file=catalog.file,
                line=spec.line_of("catalog"),
            )
        return None
    if "remote" in spec:
        raise ConfigError(
            f"{what}: a Spark Connect target's catalog is the Connect server's; set its "
            "Hive settings where the server starts (docs/deploy.md)",
            file=catalog.file,
            line=spec.line_of("catalog"),
        )
    missing = [key for key in ("url", "user", "password") if catalog.get(key) in (None, "")]
    if missing:
        raise ConfigError(
            f"{what}: type hive needs {', '.join(missing)}",
            file=catalog.file,
            line=spec.line_of("catalog"),
            hint="e.g. url: jdbc:postgresql://HOST:5432/metastore, user: hive, "
            "password: \"{{ env_var('METASTORE_PASSWORD') }}\"",
        )
    url = untemplated(catalog, "url", "", "write the metastore's JDBC URL itself")
    if not url.startswith(tuple(JDBC_DRIVERS)):
        raise ConfigError(
            f"{what}: url must start with {' or '.join(JDBC_DRIVERS)}, got {url!r}",
            file=catalog.file,
            line=catalog.line_of("url"),
            hint="the runner fetches the JDBC driver of PostgreSQL; for another database set "
            "the spark.hadoop.javax.jdo.option.* settings and its driver's jar in spark_conf",
        )
    user, password = (
        render_env_vars(
            str(catalog[key]),
            what=f"{what} {key}",
            file=catalog.file,
            line=catalog.line_of(key),
        )
        for key in ("user", "password")
    )
    return CatalogSpec(
        url=url,
        user=user,
        password=password,
        file=catalog.file,
        lines={key: catalog.line_of(key) for key in catalog},
    )


# What a k8s:// master cannot run without: the image of the executor pods.
KUBERNETES_REQUIRED_CONF = ("spark.kubernetes.container.image",)


def _check_kubernetes_conf(spec: YamlMap, name: str, conf: dict[str, str]) -> None:
    """A ``k8s://`` target sets the executors' container image in its spark_conf. Only the
    settings are checked: nothing here reaches the cluster (docs/deploy.md)."""
    missing = [key for key in KUBERNETES_REQUIRED_CONF if key not in conf]
    if missing:
        raise ConfigError(
            f"target '{name}' runs on Kubernetes (master: k8s://...) but its spark_conf does not "
            f"set {', '.join(missing)}",
            file=spec.file,
            line=spec.line_of("master"),
            hint="set the image of the executor pods (Spark, Python and the runner installed), "
            "for example spark.kubernetes.container.image: registry.example.com/runner:1.0",
        )


def _connect_retry_seconds(spec: YamlMap, name: str, remote: str | None) -> float:
    """``connect_retry_seconds``: a number of seconds above 0, on a ``remote:`` target only."""
    if "connect_retry_seconds" not in spec:
        return DEFAULT_CONNECT_RETRY_SECONDS
    value = spec.get("connect_retry_seconds")
    line = spec.line_of("connect_retry_seconds")
    if remote is None:
        raise ConfigError(
            f"target '{name}' sets connect_retry_seconds without remote: it says how long a "
            "Spark Connect client waits for its server",
            file=spec.file,
            line=line,
            hint="remove it, or use it on a target with remote: sc://HOST:PORT",
        )
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise ConfigError(
            f"target '{name}': connect_retry_seconds must be a number of seconds above 0, "
            f"got {value!r}",
            file=spec.file,
            line=line,
            hint="for example: connect_retry_seconds: 120",
        )
    return float(value)


# -- lint settings -------------------------------------------------------------------------


def load_lint_settings(doc: YamlMap) -> LintSettings:
    """``lint: {severity: {DL008: error}, disable: [DL009]}``; rule codes are checked against
    the rules by the linter, which knows them."""
    lint = doc.child("lint")
    check_keys(lint, ("severity", "disable"), "lint")
    severity = lint.child("severity")
    levels: dict[str, LintSeverity] = {}
    lines: dict[str, int] = {}
    for code, level in severity.items():
        line = severity.line_of(code)
        if not isinstance(code, str) or not _RULE_CODE.fullmatch(code):
            raise ConfigError(
                f"lint.severity: {code!r} is not a rule code like DL008", file=lint.file, line=line
            )
        if not is_one_of(level, LINT_SEVERITIES):
            raise ConfigError(
                f"lint.severity.{code} must be one of {', '.join(LINT_SEVERITIES)}, got {level!r}",
                file=lint.file,
                line=line,
            )
        levels[code] = level
        lines[code] = line
    disable = lint.get("disable") or []
    if isinstance(disable, str):
        disable = [disable]
    line = lint.line_of("disable")
    if not isinstance(disable, list):
        raise ConfigError("lint.disable must be a list of rule codes", file=lint.file, line=line)
    for code in disable:
        if not isinstance(code, str) or not _RULE_CODE.fullmatch(code):
            raise ConfigError(
                f"lint.disable: {code!r} is not a rule code like DL009", file=lint.file, line=line
            )
        lines.setdefault(code, line)
    return LintSettings(
        severity=levels,
        disable=tuple(disable),
        file=lint.file,
        lines=lines,
    )
