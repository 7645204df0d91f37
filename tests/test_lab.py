"""``make lab`` works: JupyterLab starts from the project's environment (as root too), opens a
chapter with its committed outputs in a real browser, and starts the kernel the notebook names.

The server is started through the Makefile's ``lab`` target itself (``install`` taken as done),
on a free loopback port with a random token, with a throw-away Jupyter config, settings and
workspace folder (autosave off: the test must never rewrite a chapter). Chromium may reach only
that server. Every wait is bounded; the server, its kernels and the browser are shut down in
``finally``, and any process of ours still alive is ended by its id.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / ".venv"
CHAPTER = ROOT / "notebooks" / "01_losslessness.ipynb"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]

pytestmark = [
    pytest.mark.slow,  # starts JupyterLab, a kernel and Chromium (~30 s)
    pytest.mark.skipif(not (VENV / "bin" / "jupyter").exists(), reason="no .venv (make install)"),
    pytest.mark.skipif(
        not Path(CHROMIUM).exists(), reason="Debian chromium is not installed (make installs it)"
    ),
    pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed"),
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def committed_output_line(notebook: Path) -> str:
    """A line of printed output the committed notebook holds (the first one long enough to be
    distinctive): what the rendered notebook must show without running anything."""
    for cell in json.loads(notebook.read_text())["cells"]:
        for out in cell.get("outputs", []):
            if out.get("output_type") == "stream":
                for line in "".join(out["text"]).splitlines():
                    if len(line.strip()) >= 12:
                        return line.strip()
    raise AssertionError(f"{notebook.name} has no printed output to look for")


class Lab:
    """``make lab`` on ``port`` with ``token``; REST calls with the token."""

    def __init__(self, tmp: Path):
        self.port, self.token = free_port(), secrets.token_hex(16)
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = tmp / "lab.log"
        config = tmp / "jupyter-config"
        settings = config / "lab" / "user-settings" / "@jupyterlab" / "docmanager-extension"
        settings.mkdir(parents=True)
        (settings / "plugin.jupyterlab-settings").write_text('{"autosave": false}')
        self.env = {
            **os.environ,
            "JUPYTER_CONFIG_DIR": str(config),  # no user config (passwords, ports) applies
            "JUPYTER_DATA_DIR": str(tmp / "jupyter-data"),  # trust database, user kernelspecs
            "JUPYTER_RUNTIME_DIR": str(tmp / "jupyter-runtime"),
            "JUPYTERLAB_WORKSPACES_DIR": str(tmp / "workspaces"),  # no restored workspace
        }
        self.args = " ".join(
            [
                "--no-browser",
                "--ip=127.0.0.1",
                f"--port={self.port}",
                "--ServerApp.port_retries=0",
                f"--IdentityProvider.token={self.token}",
            ]
        )
        self.proc: subprocess.Popen | None = None
        self.seen: dict[int, object] = {}  # pid -> psutil.Process, every process of ours

    def start(self) -> None:
        with self.log.open("w") as log:
            self.proc = subprocess.Popen(
                [
                    "make",
                    "--no-print-directory",
                    "-o",
                    "install",
                    "-o",
                    ".venv/.installed",
                    "lab",
                    f"LAB_ARGS={self.args}",
                ],
                cwd=ROOT,
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def api(self, path: str, method: str = "GET", timeout: float = 10):
        request = urllib.request.Request(
            self.url + path, method=method, headers={"Authorization": f"token {self.token}"}
        )
        with urllib.request.urlopen(request, timeout=timeout) as response:
            body = response.read()
        return json.loads(body) if body else None

    def wait_until_up(self, timeout: float = 90) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"make lab exited ({self.proc.returncode}):\n{self.tail()}")
            try:
                self.api("/api/status", timeout=2)
                return
            except OSError:
                time.sleep(0.5)
        raise AssertionError(f"JupyterLab did not answer within {timeout} s:\n{self.tail()}")

    def remember_processes(self) -> None:
        import psutil

        try:
            top = psutil.Process(self.proc.pid)
            for p in [top, *top.children(recursive=True)]:
                self.seen.setdefault(p.pid, p)
        except psutil.NoSuchProcess:
            pass

    def stop(self) -> None:
        """Kernels, then the server (REST), then whatever of ours is left, by pid."""
        import psutil

        if self.proc is None:
            return
        self.remember_processes()
        try:
            for session in self.api("/api/sessions", timeout=5):
                self.api(f"/api/sessions/{session['id']}", "DELETE", timeout=15)
            self.api("/api/shutdown", "POST", timeout=5)
        except OSError:
            pass
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGTERM)  # the session make was started in
        alive = [p for p in self.seen.values() if p.is_running()]
        for p in alive:
            p.terminate()
        _, alive = psutil.wait_procs(alive, timeout=10)
        for p in alive:
            p.kill()
        if self.proc.poll() is None:
            self.proc.wait(timeout=10)

    def tail(self, n: int = 3000) -> str:
        return self.log.read_text(errors="replace")[-n:]


def test_make_lab_opens_a_chapter_with_its_outputs_and_starts_its_kernel(tmp_path):
    sync_api = pytest.importorskip("playwright.sync_api")
    kernel_name = json.loads(CHAPTER.read_text())["metadata"]["kernelspec"]["name"]
    line = committed_output_line(CHAPTER)
    before = hashlib.sha256(CHAPTER.read_bytes()).hexdigest()
    checkpoints = CHAPTER.parent / ".ipynb_checkpoints"
    had_checkpoints = checkpoints.exists()
    left: list[str] = []
    lab = Lab(tmp_path)
    try:
        lab.start()
        lab.wait_until_up()
        spec = lab.api("/api/kernelspecs")["kernelspecs"].get(kernel_name)
        assert spec, f"no kernel {kernel_name!r} (the notebook's) in {lab.url}/api/kernelspecs"
        python = Path(spec["spec"]["argv"][0])
        assert python.parent == VENV / "bin", f"kernel {kernel_name} runs {python}, not .venv"

        with sync_api.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            try:
                context = browser.new_context(viewport={"width": 1280, "height": 800})

                def only_lab(route):
                    if route.request.url.startswith(lab.url):
                        route.continue_()
                    else:
                        left.append(route.request.url)
                        route.abort()

                context.route("**/*", only_lab)
                page = context.new_page()
                page.goto(f"{lab.url}/lab/tree/{CHAPTER.name}?token={lab.token}", timeout=60_000)
                output = page.locator(".jp-OutputArea-output").filter(has_text=line).first
                output.wait_for(state="visible", timeout=90_000)
                output.scroll_into_view_if_needed()
                session = wait_for_idle_kernel(lab, CHAPTER.name, page, timeout=90)
                lab.remember_processes()
                assert session["kernel"]["name"] == kernel_name, session
                page.screenshot(path=str(tmp_path / "lab.png"))
            finally:
                browser.close()
    finally:
        lab.stop()
        if not had_checkpoints:
            shutil.rmtree(checkpoints, ignore_errors=True)  # JupyterLab's, made on opening
    assert not [p.pid for p in lab.seen.values() if p.is_running()], "processes left running"
    assert not left, f"the browser tried to leave the machine: {left}"
    assert hashlib.sha256(CHAPTER.read_bytes()).hexdigest() == before, "the chapter changed"


def wait_for_idle_kernel(lab: Lab, name: str, page, timeout: float) -> dict:
    """The session the browser opened for notebook ``name``, once its kernel is idle.

    Waits in the page (not ``time.sleep``): the sync Playwright API serves the route handler,
    and so lets the page's requests through, only while a Playwright call is running.
    """
    deadline, sessions = time.monotonic() + timeout, []
    while time.monotonic() < deadline:
        sessions = [s for s in lab.api("/api/sessions") if s["path"].endswith(name)]
        if sessions and sessions[0]["kernel"]["execution_state"] == "idle":
            return sessions[0]
        page.wait_for_timeout(500)
    raise AssertionError(f"no idle kernel for {name} within {timeout} s: {sessions}\n{lab.tail()}")
