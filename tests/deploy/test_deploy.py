"""What can be checked of deploy/ without Docker, systemd, nginx or Caddy.

Every QUORIDOR_* variable a deployment file sets must be one the server reads, with a value it
accepts; every setting must be documented; the probes, timeouts and proxy headers must fit
what the server does.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import re
import shlex
import subprocess
import sys
import tomllib
from collections.abc import Mapping
from dataclasses import fields
from ipaddress import ip_address
from pathlib import Path
from typing import Any

import pytest
import yaml

from server.app import GameServer
from server.config import Config, env_name, parse_config, unknown_variables
from tests.deploy import settings_doc
from tests.deploy.settings_doc import default, env_text

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
SERVER_VARIABLES = {env_name(item.name) for item in fields(Config)}
DEPLOY_ONLY = {"QUORIDOR_DOMAIN"}
"""Read by compose and Caddy (the public host name), never by the server."""
VARIABLE = re.compile(r"\bQUORIDOR_[A-Z][A-Z0-9_]*")
DEFAULTS = Config(**{item.name: default(item.name) for item in fields(Config)})
"""What ``quoridor-server`` runs with when nothing is set."""
SHUTDOWN_SECONDS = 10.0
"""An upper bound on a graceful stop with no shutdown delay: websockets waits close_timeout
(5 s) for a client that never answers the close frame; measured 5.1 s with such clients."""
EXAMPLE_DOMAIN = "play.example.org"


def read(name: str) -> str:
    return (DEPLOY / name).read_text()


def variables_in(text: str) -> set[str]:
    return set(VARIABLE.findall(text))


def config_from(env: Mapping[str, str]) -> Config:
    """What the server makes of ``env`` (only its QUORIDOR_* entries), with no flags."""
    return parse_config([], env={k: v for k, v in env.items() if k.startswith("QUORIDOR_")})


def seconds(text: str) -> float:
    """A duration in compose ("1m30s"), systemd ("30", "2min") or nginx ("3600s") syntax."""
    units = {"": 1, "ms": 0.001, "s": 1, "sec": 1, "m": 60, "min": 60, "h": 3600}
    parts = re.findall(r"(\d+(?:\.\d+)?)\s*(ms|sec|min|s|m|h|)", text.strip())
    assert parts, f"not a duration: {text!r}"
    assert "".join(n + u for n, u in parts) == text.replace(" ", ""), f"not a duration: {text!r}"
    return sum(float(number) * units[unit] for number, unit in parts)


# -- the files themselves ------------------------------------------------------------------


def dockerfile() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) in order, continuation lines joined, comments dropped."""
    instructions: list[tuple[str, str]] = []
    pending = ""
    for line in read("Dockerfile").splitlines():
        stripped = line.strip()
        if not pending and (not stripped or stripped.startswith("#")):
            continue
        if pending and stripped.startswith("#"):
            continue  # a comment inside a continued instruction
        if stripped.endswith("\\"):
            pending += stripped[:-1] + " "
            continue
        keyword, _, arguments = (pending + stripped).partition(" ")
        instructions.append((keyword.upper(), arguments.strip()))
        pending = ""
    assert not pending, "the Dockerfile ends inside a continued line"
    return instructions


def docker(keyword: str) -> list[str]:
    return [arguments for name, arguments in dockerfile() if name == keyword]


def docker_env() -> dict[str, str]:
    env: dict[str, str] = {}
    for arguments in docker("ENV"):
        for word in shlex.split(arguments):
            key, equals, value = word.partition("=")
            assert equals, f"ENV {word!r}: use the KEY=value form"
            env[key] = value
    return env


def exec_form(arguments: str) -> list[str]:
    """The JSON array of an exec-form CMD, ENTRYPOINT or HEALTHCHECK CMD."""
    value = json.loads(arguments)
    assert isinstance(value, list), f"not exec form: {arguments}"
    assert all(isinstance(word, str) for word in value)
    return value


def healthcheck() -> tuple[dict[str, str], list[str]]:
    """The Dockerfile's HEALTHCHECK: its --options and its exec-form command."""
    (arguments,) = docker("HEALTHCHECK")
    options, found, command = arguments.partition("CMD ")
    assert found, "HEALTHCHECK without CMD"
    parsed: dict[str, str] = {}
    for option in options.split():
        key, _, value = option.removeprefix("--").partition("=")
        parsed[key] = value
    return parsed, exec_form(command)


def compose() -> dict[str, Any]:
    document = yaml.safe_load(read("compose.yaml"))
    assert isinstance(document, dict)
    return document


def interpolate(value: str, env: Mapping[str, str]) -> str:
    """Compose's ${VAR}, ${VAR:-default} and ${VAR:?error} (what compose.yaml uses)."""

    def substitute(match: re.Match[str]) -> str:
        name, operator, argument = match.group(1), match.group(2), match.group(3)
        if operator == ":?":
            assert env.get(name), f"compose would stop: {argument}"
        if operator == ":-" and not env.get(name):
            return argument or ""
        return env[name]

    result = re.sub(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:[-?])([^}]*))?\}", substitute, value)
    assert "$" not in result.replace("$$", ""), f"unhandled interpolation in {value!r}"
    return result


def service_environment(service: str, env: Mapping[str, str]) -> dict[str, str]:
    raw = compose()["services"][service].get("environment", {})
    assert isinstance(raw, dict), "environment: use the mapping form"
    return {str(key): interpolate(str(value), env) for key, value in raw.items()}


def unit() -> dict[str, list[tuple[str, str]]]:
    """The systemd unit as {section: [(key, value), ...]}: keys may repeat (Environment=)."""
    sections: dict[str, list[tuple[str, str]]] = {}
    current: list[tuple[str, str]] | None = None
    pending = ""
    for number, line in enumerate(read("quoridor.service").splitlines(), 1):
        stripped = line.strip()
        if not pending and (not stripped or stripped[0] in "#;"):
            continue
        if stripped.endswith("\\"):
            pending += stripped[:-1] + " "
            continue
        stripped, pending = pending + stripped, ""
        if stripped.startswith("[") and stripped.endswith("]"):
            assert stripped[1:-1] not in sections, f"line {number}: section {stripped} twice"
            current = sections[stripped[1:-1]] = []
            continue
        key, equals, value = stripped.partition("=")
        assert equals, f"quoridor.service line {number} is not Key=value: {line!r}"
        assert current is not None, f"quoridor.service line {number}: outside any section"
        current.append((key.strip(), value.strip()))
    return sections


def service_settings() -> dict[str, list[str]]:
    settings: dict[str, list[str]] = {}
    for key, value in unit()["Service"]:
        settings.setdefault(key, []).append(value)
    return settings


def service(key: str) -> str:
    """The single value of ``key`` in [Service]."""
    values = service_settings().get(key, [])
    assert len(values) == 1, f"[Service] {key}= should appear once, not {values}"
    return values[0]


def unit_environment() -> dict[str, str]:
    env: dict[str, str] = {}
    for value in service_settings().get("Environment", []):
        for word in shlex.split(value):
            key, equals, setting = word.partition("=")
            assert equals, f"Environment={value}: not NAME=value"
            env[key] = setting
    return env


def env_example() -> dict[str, str]:
    """The commented-out assignments of quoridor.env.example."""
    pairs = re.findall(r"^#(QUORIDOR_[A-Z0-9_]+)=(.*)$", read("quoridor.env.example"), re.M)
    names = [name for name, _ in pairs]
    assert len(names) == len(set(names)), "a variable is listed twice"
    return dict(pairs)


def nginx_directives() -> list[tuple[list[str], str, str]]:
    """(enclosing blocks, name, arguments) for every directive and block in nginx.conf."""
    text = re.sub(r"#[^\n]*", "", read("nginx.conf"))
    found: list[tuple[list[str], str, str]] = []
    blocks: list[str] = []
    for token in re.findall(r"[^{};]*[{};]", text):
        body, end = " ".join(token[:-1].split()), token[-1]
        if end == "}":
            assert blocks, "nginx.conf: unbalanced }"
            blocks.pop()
            continue
        if body:
            name, _, arguments = body.partition(" ")
            found.append((list(blocks), name, arguments))
        if end == "{":
            blocks.append(body)
    assert not blocks, "nginx.conf: unclosed block"
    return found


# -- variables: named, read, accepted, documented ------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        "Dockerfile",
        "compose.yaml",
        "Caddyfile",
        "quoridor.service",
        "quoridor.env.example",
        "nginx.conf",
        "README.md",
    ],
)
def test_every_variable_named_is_one_the_server_reads(name: str) -> None:
    unknown = variables_in(read(name)) - SERVER_VARIABLES - DEPLOY_ONLY
    assert not unknown, f"deploy/{name} names variables the server does not read: {unknown}"


def test_every_setting_is_documented_in_the_readme() -> None:
    readme = read("README.md")
    begin = readme.index(settings_doc.TABLE_BEGIN) + len(settings_doc.TABLE_BEGIN)
    table = readme[begin : readme.index(settings_doc.TABLE_END)].strip()
    expected = settings_doc.reference_table()
    assert table == expected, (
        "deploy/README.md's settings table differs from server/config.py; "
        "run: .venv/bin/python -m tests.deploy.settings_doc --write"
    )
    assert variables_in(readme) >= SERVER_VARIABLES
    for name in DEPLOY_ONLY:
        assert f"`{name}`" in readme, f"{name} is used by deploy files but not documented"


def test_the_env_example_lists_every_setting_with_its_default() -> None:
    assert read("quoridor.env.example") == settings_doc.env_example(), (
        "deploy/quoridor.env.example differs from server/config.py; "
        "run: .venv/bin/python -m tests.deploy.settings_doc --write"
    )
    example = env_example()
    assert set(example) == SERVER_VARIABLES
    for item in fields(Config):
        assert example[env_name(item.name)] == env_text(default(item.name))


def test_the_server_accepts_every_documented_default() -> None:
    row = re.compile(r"^\| `(QUORIDOR_\w+)` \| `--[\w-]+` \| ([^|]+) \|", re.M)
    env: dict[str, str] = {}
    for name, value in row.findall(read("README.md")):
        env[name] = "" if value.strip() == "*(empty)*" else value.strip().strip("`")
    assert set(env) == SERVER_VARIABLES
    assert parse_config([], env=env) == DEFAULTS
    assert parse_config([], env=env_example()) == DEFAULTS
    assert parse_config([], env={}) == DEFAULTS


@pytest.mark.parametrize(
    ("argv", "env", "said"),
    [
        (["--port", "70000"], {}, "--port must be a TCP port, 0 to 65535, not 70000"),
        (["--shutdown-delay", "99999"], {}, "--shutdown-delay must be at most 300 s (load"),
        (["--max-message", "10"], {}, "--max-message must be at least 1024 bytes (a client's"),
        (["--origins", "notaurl"], {}, "--origins takes sites as browsers name them, a scheme"),
        (
            ["--origins", "https://a.example, https://b.example/"],
            {},
            "--origins takes sites as browsers name them, a scheme and a host "
            "(https://play.example.org, http://localhost:8080; no path), not 'https://b.example/'",
        ),
        (["--redis", "redis://r:6379/0"], {}, "--redis needs a PostgreSQL --db (postgresql://"),
        (
            ["--redis", "redis://r:6379/0", "--db", "postgresql://q@db/q"],
            {},
            "--redis needs --cluster-secret (the same on every node)",
        ),
        (["--sync", "bogus"], {}, "--sync must be one of off, normal, full, not 'bogus'"),
        (["--sync", "NORMAL"], {}, "--sync must be one of off, normal, full, not 'NORMAL'"),
        (["--log-format", "xml"], {}, "--log-format must be one of plain, json, not 'xml'"),
        (["--log-level", "loud"], {}, "--log-level must be one of DEBUG, INFO, WARNING, ERROR"),
        (["--trusted-proxies", "999.1.1.1"], {}, "--trusted-proxies: '999.1.1.1' does not"),
        (["--max-per-ip", "0"], {}, "--max-per-ip must be at least 1, not 0"),
        (["--ai-workers", "-1"], {}, "--ai-workers cannot be negative (-1)"),
        (["--rate", "0"], {}, "--rate must be above 0, not 0"),
        (["--grace", "inf"], {}, "--grace must be a finite number, not inf"),
        ([], {"QUORIDOR_HARD_LIMIT": "nan"}, "--hard-limit must be a finite number, not nan"),
        (["--hard-limit", "0"], {}, "--hard-limit (0) must be at least --grace (60) and"),
        (["--cluster-secret", "short"], {}, "--cluster-secret must be at least 16 characters"),
        (["--db", "mysql://x/y"], {}, "--db takes a file's path or a postgresql:// URL, not"),
        ([], {"QUORIDOR_PORT": "abc"}, "QUORIDOR_PORT must be a whole number, not 'abc'"),
        ([], {"QUORIDOR_GRACE": "soon"}, "QUORIDOR_GRACE must be a number, not 'soon'"),
    ],
)
def test_a_setting_that_makes_no_sense_is_one_sentence_not_a_traceback(
    argv: list[str], env: dict[str, str], said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as stopped:
        parse_config(argv, env=env)
    assert stopped.value.code == 2
    error = capsys.readouterr().err
    assert f"quoridor-server: error: {said}" in error
    assert "Traceback" not in error
    assert len(error.splitlines()) == 1  # not the usage's 50 lines


DOCUMENTS = [
    "README.md",
    "deploy/README.md",
    "docs/cluster.md",
    "docs/performance.md",
    "protocol/PROTOCOL.md",
]
INTERPRETERS = {
    ".venv/bin/python": "the checkout's, made by make",
    "/opt/quoridor/venv/bin/python": "the systemd install's (deploy/README.md)",
}
INSTALLED = {"engine", "protocol", "server", "client", "web"}
"""The packages an install has (pyproject.toml); tests and deploy only in a checkout."""


def test_every_documented_python_command_names_an_interpreter_that_has_the_packages() -> None:
    """The operators' review (M3): `python -m server.copydb ...`, as both READMEs wrote it,
    failed with `No module named 'server'` (or 'msgspec') unless the virtual environment
    was active. Every `python -m` command of the documents names the venv's interpreter
    (python3 -m venv aside), and the module is there: in the checkout, or installed."""
    found = 0
    for name in DOCUMENTS:
        text = (ROOT / name).read_text()
        for match in re.finditer(r"(\S*?\bpython3?) -m\s+([\w.]+)", text):
            where, module = match.group(1).lstrip("`(\"'"), match.group(2)
            line = text[text.rfind("\n", 0, match.start()) + 1 : text.find("\n", match.end())]
            if module == "venv":
                continue
            found += 1
            assert where in INTERPRETERS, f"{name}: {line.strip()!r} runs a bare python"
            assert importlib.util.find_spec(module) is not None, f"{name}: no module {module}"
            in_checkout = "cd /path/to/quoridor-checkout" in line
            if where.startswith("/opt/") and not in_checkout:
                assert module.partition(".")[0] in INSTALLED, f"{name}: {module} not installed"
    assert found >= 10


def test_the_documented_copy_command_runs_from_the_checkout_with_its_interpreter() -> None:
    done = subprocess.run(
        [str(ROOT / ".venv/bin/python"), "-m", "server.copydb"],
        cwd=ROOT, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "-m server.copydb SQLITE_FILE postgresql://" in done.stderr


def test_a_misspelt_variable_is_named_with_the_setting_it_resembles() -> None:
    env = {
        "QUORIDOR_PROT": "9000",
        "QUORIDOR_FOO": "1",
        "QUORIDOR_PORT": "9001",
        "QUORIDOR_SERVER": "ws://x",
        "HOME": "",
    }
    assert unknown_variables(env) == [
        "QUORIDOR_FOO is not a setting of the server and is ignored",  # resembles nothing
        "QUORIDOR_PROT is not a setting of the server and is ignored (did you mean QUORIDOR_PORT?)",
    ]


def test_every_quoridor_variable_the_project_uses_is_known() -> None:
    """The deployment files', the client's and the tests' variables are not called typos."""
    used = set()
    for path in [*ROOT.glob("*/**/*.py"), *ROOT.glob("deploy/*"), *ROOT.glob("*.md")]:
        if ".venv" not in path.parts and path.is_file() and path != Path(__file__).resolve():
            used |= set(re.findall(r"\bQUORIDOR_[A-Z][A-Z_]*[A-Z]\b", path.read_text()))
    assert "QUORIDOR_DOMAIN" in used
    assert unknown_variables(dict.fromkeys(used, "")) == []


def test_sensible_settings_pass_the_checks() -> None:
    config = parse_config(["--log-level", "debug", "--sync", "off", "--port", "65535"], env={})
    assert (config.log_level, config.sync, config.port) == ("debug", "off", 65535)
    assert parse_config(["--trusted-proxies", "10.0.0.0/8, ::1"], env={}).proxy_networks
    origins = "https://play.example.org, http://localhost:8080, http://[::1]:9000"
    assert len(parse_config(["--origins", origins], env={}).origin_list) == 3


def test_help_names_every_variable() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "server", "--help"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "COLUMNS": "200"},
        timeout=30,
        check=True,
    )
    for item in fields(Config):
        assert env_name(item.name) in result.stdout
        assert settings_doc.flag(item.name) in result.stdout


# -- Dockerfile ----------------------------------------------------------------------------


def test_dockerfile_base_is_a_slim_python_311_or_later() -> None:
    (argument,) = [a for a in docker("ARG") if a.startswith("PYTHON_IMAGE=")]
    image = argument.partition("=")[2]
    match = re.fullmatch(r"python:3\.(\d+)-slim(?:-[a-z]+)?(?:@sha256:[0-9a-f]{64})?", image)
    assert match, image
    assert int(match.group(1)) >= 11
    for base in docker("FROM"):
        assert base.split()[0] == "${PYTHON_IMAGE}", "build and runtime stages share one base"


def test_dockerfile_runs_as_a_user_other_than_root() -> None:
    users = docker("USER")
    assert users, "no USER: the server would run as root"
    user = users[-1].split(":")[0]
    assert user not in ("root", "0")
    # It comes after everything that needs root.
    names = [name for name, _ in dockerfile()]
    assert "RUN" not in names[names.index("USER") :]


def test_dockerfile_environment_is_accepted() -> None:
    env = docker_env()
    assert variables_in(" ".join(env)) <= SERVER_VARIABLES
    config = config_from(env)
    assert config.host == "0.0.0.0"
    assert config.db.startswith("/data/")
    assert docker("VOLUME") == ['["/data"]']
    assert docker("EXPOSE") == [str(config.port)]


def test_dockerfile_starts_the_server_as_pid_1() -> None:
    (entrypoint,) = docker("ENTRYPOINT")
    assert exec_form(entrypoint)[0].endswith("/quoridor-server")
    for cmd in docker("CMD"):
        exec_form(cmd)  # a shell-form CMD would put /bin/sh in front of the server
    assert docker("STOPSIGNAL") == ["SIGTERM"]


def test_dockerfile_copies_what_the_package_is_built_from() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    packages = pyproject["tool"]["setuptools"]["packages"]
    copied = set()
    for arguments in docker("COPY"):
        words = [w for w in arguments.split() if not w.startswith("--")]
        if arguments.startswith("--from"):
            continue
        for source in words[:-1]:
            assert (ROOT / source).exists(), f"COPY {source}: not in the repository"
            copied.add(source.rstrip("/"))
    assert {"pyproject.toml", pyproject["project"]["readme"]} <= copied
    assert {name.split(".")[0] for name in packages} <= copied


def copied_sources() -> set[str]:
    """What the build stage copies from the build context (the repository root)."""
    sources: set[str] = set()
    for arguments in docker("COPY"):
        if not arguments.startswith("--from"):
            words = [w for w in arguments.split() if not w.startswith("--")]
            sources.update(source.rstrip("/") for source in words[:-1])
    return sources


def test_the_dockerignore_lets_in_every_copied_source() -> None:
    """It excludes everything (``*``) and lets back in what the image is built from: a COPY
    of a path it keeps out fails the build ("not found")."""
    lines = [line.strip() for line in read("Dockerfile.dockerignore").splitlines()]
    patterns = [line for line in lines if line and not line.startswith("#")]
    assert patterns[0] == "*"
    let_in = {pattern[1:].rstrip("/") for pattern in patterns if pattern.startswith("!")}
    assert copied_sources() <= let_in, sorted(copied_sources() - let_in)


def test_dockerfile_builds_the_compiled_server() -> None:
    """The image runs the compiled build (deploy/compile.py), made in the build stage from
    the packages copied there, unless ``--build-arg COMPILE=no``."""
    from deploy.compile import PACKAGES

    assert "COMPILE=yes" in docker("ARG")
    assert {"deploy/compile.py", "deploy/__init__.py", *PACKAGES} <= copied_sources()
    (build,) = [run for run in docker("RUN") if "-m deploy.compile" in run]
    assert '[ "$COMPILE" = yes ]' in build
    assert "--out /opt/quoridor/compiled" in build
    from_build = [a.partition(" ")[2] for a in docker("COPY") if a.startswith("--from=build")]
    assert "/opt/quoridor /opt/quoridor" in from_build
    assert docker_env()["PYTHONPATH"] == "/opt/quoridor/compiled"


def test_every_package_is_installed() -> None:
    """A non-editable install (the image, the systemd venv) has only the packages listed."""
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    listed = set(pyproject["tool"]["setuptools"]["packages"])
    on_disk = {
        ".".join(init.parent.relative_to(ROOT).parts)
        for top in {name.split(".")[0] for name in listed}
        for init in (ROOT / top).rglob("__init__.py")
    }
    missing = on_disk - listed
    assert not missing, f"add to [tool.setuptools] packages in pyproject.toml: {sorted(missing)}"


def test_healthcheck_probes_healthz_with_the_standard_library() -> None:
    options, command = healthcheck()
    assert command[:2] == ["/opt/quoridor/bin/python", "-c"]
    code = command[2]
    compile(code, "HEALTHCHECK", "exec")
    assert "/healthz" in code
    imported = re.findall(r"import ([\w., ]+?);", code)
    for module in ",".join(imported).replace(" ", "").split(","):
        assert module.split(".")[0] in sys.stdlib_module_names, module
    assert seconds(options["timeout"]) < seconds(options["interval"])
    assert "start-period" in options


async def test_healthcheck_passes_against_the_server_and_fails_without_it() -> None:
    _, command = healthcheck()

    async def probe(port: int) -> int:
        env = {**os.environ, "QUORIDOR_PORT": str(port)}
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            *command[1:],
            env=env,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL,
        )
        return await asyncio.wait_for(process.wait(), 20)

    async with GameServer(Config(port=0)).running() as server:
        port = server.port
        assert await probe(port) == 0
    # Docker reads 1 as unhealthy; 2 is reserved.
    assert await probe(port) == 1


# -- compose.yaml and the Caddyfile --------------------------------------------------------


def test_compose_runs_the_image_built_from_the_dockerfile() -> None:
    quoridor = compose()["services"]["quoridor"]
    build = quoridor["build"]
    context = (DEPLOY / build["context"]).resolve()
    assert context == ROOT
    assert (context / build["dockerfile"]).resolve() == DEPLOY / "Dockerfile"
    assert "quoridor-data:/data" in quoridor["volumes"]
    assert "quoridor-data" in compose()["volumes"]
    assert quoridor["restart"] == "unless-stopped"
    assert "ports" not in quoridor, "only Caddy should be reachable from outside"


def test_compose_environment_is_accepted() -> None:
    env = service_environment("quoridor", {"QUORIDOR_DOMAIN": EXAMPLE_DOMAIN})
    assert set(env) <= SERVER_VARIABLES
    config = config_from(env)
    assert config.origin_list == [f"https://{EXAMPLE_DOMAIN}"]
    assert config.host == "0.0.0.0"
    assert config.db.startswith("/data/")
    # Behind Caddy every connection has Caddy's address: trust it for X-Forwarded-For, so the
    # per-IP cap counts players, not the proxy.
    assert any(ip_address("172.18.0.5") in net for net in config.proxy_networks)
    assert config.log_format in ("plain", "json")


def test_compose_requires_the_domain() -> None:
    with pytest.raises(AssertionError, match="QUORIDOR_DOMAIN"):
        service_environment("quoridor", {})


def test_compose_healthcheck_is_the_dockerfiles() -> None:
    check = compose()["services"]["quoridor"]["healthcheck"]
    _, command = healthcheck()
    assert check["test"][0] == "CMD"
    assert check["test"][1:3] == command[:2]
    assert " ".join(check["test"][3].split()) == " ".join(command[2].split())
    assert seconds(check["timeout"]) < seconds(check["interval"])


def test_compose_stop_grace_outlasts_a_graceful_shutdown() -> None:
    quoridor = compose()["services"]["quoridor"]
    config = config_from(service_environment("quoridor", {"QUORIDOR_DOMAIN": EXAMPLE_DOMAIN}))
    assert quoridor.get("stop_signal", "SIGTERM") == "SIGTERM"
    grace = seconds(quoridor["stop_grace_period"])
    assert grace >= 2 * SHUTDOWN_SECONDS + config.shutdown_delay


def test_caddy_serves_the_domain_and_proxies_to_the_server() -> None:
    caddy = compose()["services"]["caddy"]
    assert caddy["image"].startswith("caddy:2")
    published = {str(port).split(":")[-1].split("/")[0] for port in caddy["ports"]}
    assert {"80", "443"} <= published
    mounts = {volume.split(":")[1]: volume.split(":")[0] for volume in caddy["volumes"]}
    caddyfile = (DEPLOY / mounts["/etc/caddy/Caddyfile"]).resolve()
    assert caddyfile == DEPLOY / "Caddyfile"
    assert {"/data", "/config"} <= set(mounts), "Caddy's certificates must survive a restart"
    assert set(service_environment("caddy", {"QUORIDOR_DOMAIN": EXAMPLE_DOMAIN})) == DEPLOY_ONLY

    text = re.sub(r"#[^\n]*", "", caddyfile.read_text())
    assert re.search(r"^\{\$QUORIDOR_DOMAIN\}\s*\{", text, re.M), "site address"
    port = config_from(service_environment("quoridor", {"QUORIDOR_DOMAIN": "x"})).port
    assert re.search(rf"\breverse_proxy\s+quoridor:{port}\b", text)
    assert re.search(r"\brespond\s+/metrics\s+40[34]\b", text), "/metrics must not be public"


# -- the systemd unit ----------------------------------------------------------------------


def test_unit_parses() -> None:
    sections = unit()
    assert set(sections) == {"Unit", "Service", "Install"}
    assert ("WantedBy", "multi-user.target") in sections["Install"]
    executable = shlex.split(service("ExecStart"))[0]
    assert executable.startswith("/")
    assert executable.endswith("/bin/quoridor-server")
    assert service("EnvironmentFile") == "-/etc/quoridor/quoridor.env"


def test_unit_is_sandboxed() -> None:
    expected = {
        "DynamicUser": "yes",
        "StateDirectory": "quoridor",
        "ProtectSystem": "strict",
        "ProtectHome": "yes",
        "PrivateTmp": "yes",
        "NoNewPrivileges": "yes",
        "CapabilityBoundingSet": "",
        "RestrictAddressFamilies": "AF_INET AF_INET6 AF_UNIX",
        "MemoryDenyWriteExecute": "yes",
        "Restart": "on-failure",
        "KillSignal": "SIGTERM",
    }
    for key, value in expected.items():
        assert service(key) == value, key
    assert "@system-service" in service_settings()["SystemCallFilter"]


def test_unit_environment_is_accepted() -> None:
    env = unit_environment()
    assert variables_in(" ".join(env)) <= SERVER_VARIABLES
    config = config_from(env)
    state = Path("/var/lib") / service("StateDirectory")
    assert Path(config.db).parent == state
    assert service("WorkingDirectory") == str(state)
    # Behind nginx every connection comes from 127.0.0.1: trust it for X-Forwarded-For.
    assert any(ip_address("127.0.0.1") in net for net in config.proxy_networks)


def test_unit_stop_timeout_outlasts_a_graceful_shutdown() -> None:
    config = config_from(unit_environment())
    timeout = seconds(service("TimeoutStopSec"))
    assert timeout >= 2 * SHUTDOWN_SECONDS + config.shutdown_delay


def test_unit_restarts_for_as_long_as_the_database_is_away() -> None:
    """The operators' review (M1): 5 restarts a minute 2 s apart left the service dead after a
    PostgreSQL outage of half a minute. It never gives up now (but a bad setting, status 2,
    is not retried), and it starts after a local PostgreSQL and stops before it."""
    settings = dict(unit()["Unit"])
    assert seconds(settings.get("StartLimitIntervalSec", "10")) == 0  # no start limit
    assert service("Restart") == "on-failure"
    assert seconds(service("RestartSec")) >= 5
    assert service("RestartPreventExitStatus") == "2"
    assert ("After", "postgresql.service") in unit()["Unit"]


@pytest.mark.skipif(
    not Path("/usr/bin/systemd-analyze").exists(), reason="systemd-analyze not installed"
)
def test_systemd_analyze_verifies_the_unit(tmp_path: Path) -> None:
    executable = shlex.split(service("ExecStart"))[0]
    text = read("quoridor.service").replace(executable, "/bin/true")
    copy = tmp_path / "quoridor.service"
    copy.write_text(text)
    result = subprocess.run(
        ["/usr/bin/systemd-analyze", "verify", str(copy)],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "quoridor.service" not in result.stderr, result.stderr


# -- nginx ---------------------------------------------------------------------------------


def test_nginx_upgrades_websockets() -> None:
    directives = nginx_directives()
    assert ([], "map", "$http_upgrade $connection_upgrade") in directives
    upgrade = [(n, a) for b, n, a in directives if b == ["map $http_upgrade $connection_upgrade"]]
    assert upgrade == [("default", "upgrade"), ("''", "close")]
    settings = {(name, arguments) for _, name, arguments in directives}
    assert ("proxy_http_version", "1.1") in settings
    assert ("proxy_set_header", "Upgrade $http_upgrade") in settings
    assert ("proxy_set_header", "Connection $connection_upgrade") in settings
    assert ("proxy_set_header", "X-Forwarded-For $proxy_add_x_forwarded_for") in settings
    # A location with any proxy_set_header of its own drops every inherited one.
    for blocks, name, _ in directives:
        if name == "proxy_set_header":
            assert not any(block.startswith("location") for block in blocks), blocks


def test_nginx_timeouts_outlast_the_ping_interval() -> None:
    ping = DEFAULTS.ping_interval
    for directive in ("proxy_read_timeout", "proxy_send_timeout"):
        values = [a for _, name, a in nginx_directives() if name == directive]
        assert values, f"{directive} missing (nginx's default is 60 s)"
        for value in values:
            assert seconds(value) > 10 * ping, f"{directive} {value}"


def test_nginx_proxies_to_the_server_and_keeps_metrics_internal() -> None:
    directives = nginx_directives()
    upstream = [a for blocks, name, a in directives if blocks == ["upstream quoridor"]]
    assert upstream == [f"{DEFAULTS.host}:{DEFAULTS.port}"]
    locations = {block for blocks, _, _ in directives for block in blocks}
    assert {"location = /healthz", "location = /readyz", "location = /metrics"} <= locations
    metrics = [(name, a) for blocks, name, a in directives if "location = /metrics" in blocks]
    assert ("deny", "all") in metrics
    assert any(name == "allow" for name, _ in metrics)
    assert metrics[-1] == ("proxy_pass", "http://quoridor")
    assert ("listen", "443 ssl") in {(name, a) for _, name, a in directives}
