"""What sandboxed commands and candidate patches leave behind is never interpreted on the host:
git config and hooks written in the sandbox do not run on the host, the host-side editor and
tree hashing refuse links, FIFOs and oversized files, and the grader grades the task's own
tests from its own result file (a conftest.py or fake pytest output in a patch grades NO)."""
import os
import threading

import pytest

from lib.swe_gym import agent, grader, instances, runtime


def _patch_adding(store, inst, files, base_patch=""):
    """A git diff against `inst`'s base commit: `base_patch`, then `files` written."""
    with runtime.Workspace.checkout(store, inst["repo"], inst["base_commit"]) as ws:
        assert ws.apply_patch(base_patch)[0]
        for rel, text in files.items():
            path = os.path.join(ws.path, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(text)
        return ws.diff()


def test_git_config_written_in_the_sandbox_never_runs_on_the_host(gym, tmp_path):
    store, cache, insts = gym
    inst = insts[0]
    hit = lambda name: f"touch {tmp_path}/{name}"     # noqa: E731 -- not visible in the sandbox
    hooks = ("post-checkout", "reference-transaction", "post-index-change", "pre-commit")
    script = "\n".join([
        "set -e",
        f"git config core.fsmonitor '{hit('fsmonitor')}; false'",
        f"git config filter.evil.clean '{hit('filter_clean')}; cat'",
        f"git config filter.evil.smudge '{hit('filter_smudge')}; cat'",
        f"git config diff.evil.command '{hit('diff_command')}'",
        f"git config diff.evil.textconv '{hit('textconv')}; cat'",
        f"git config core.pager '{hit('pager')}; cat'",
        f"git config core.sshCommand '{hit('ssh')}'",
        f"printf '[core]\\n\\tfsmonitor = \"{hit('include')}; false\"\\n' > .git/extra.cfg",
        "git config include.path extra.cfg",
        "mkdir -p .git/evilhooks",
        *(f"printf '#!/bin/sh\\n{hit('hook_' + h)}\\n' > .git/hooks/{h}; "
          f"cp .git/hooks/{h} .git/evilhooks/{h}" for h in hooks),
        "chmod +x .git/hooks/* .git/evilhooks/*",
        "git config core.hooksPath .git/evilhooks",
        "printf '* filter=evil diff=evil\\n' > .gitattributes",
        "echo '# edited in the sandbox' >> testkit/numeric.py",
        "git init -q vendor && echo v > vendor/v.txt && git -C vendor add v.txt",
        "git -C vendor -c user.name=a -c user.email=a@b.c commit -qm v",  # a nested repository
        f"git -C vendor config core.fsmonitor '{hit('nested')}; false'",
    ])
    with runtime.Workspace.checkout(store, inst["repo"], inst["base_commit"]) as ws:
        env = agent.AgentEnv(ws, agent.Caps())
        assert env.bash(script).endswith("[exit code 0]")
        patch = ws.diff()
        ws.reset_files(["testkit/numeric.py"])
        after_reset = ws.diff()
        nested_git = os.path.lexists(os.path.join(ws.path, "vendor/.git"))
    assert not os.listdir(tmp_path), " ".join(sorted(os.listdir(tmp_path)))
    assert not nested_git           # the nested repository comes back without its .git
    assert "+# edited in the sandbox" in patch and "+* filter=evil diff=evil" in patch
    assert runtime.patch_files(patch) == [".gitattributes", "testkit/numeric.py", "vendor/v.txt"]
    assert runtime.patch_files(after_reset) == [".gitattributes", "vendor/v.txt"]
    assert grader.grade(inst, patch, store, cache=cache).resolution == "NO"
    assert not os.listdir(tmp_path), " ".join(sorted(os.listdir(tmp_path)))


def test_editor_refuses_links_and_oversized_files_the_sandbox_left(gym, tmp_path):
    store, _, insts = gym
    secret = tmp_path / "shadow"
    secret.write_text("root:not-for-the-agent\n")
    outside = tmp_path / "host_dir"
    outside.mkdir()
    links = {"leak.txt": secret, "out_dir": outside, "dangling.py": outside / "planted.py"}
    with runtime.Workspace.checkout(store, insts[0]["repo"], insts[0]["base_commit"]) as ws:
        env = agent.AgentEnv(ws, agent.Caps())
        obs = env.bash(" && ".join(f"ln -s {t} {n}" for n, t in links.items())
                       + " && head -c 3000000 /dev/zero | tr '\\0' a > big.txt")
        assert obs.endswith("[exit code 0]")
        for name, target in links.items():    # where the sandbox did not return a link, plant it
            if not os.path.islink(os.path.join(ws.path, name)):
                os.symlink(target, os.path.join(ws.path, name))
        for call in (dict(command="view", path="leak.txt"),
                     dict(command="view", path="out_dir"),
                     dict(command="str_replace", path="leak.txt", old_str="root", new_str="x"),
                     dict(command="insert", path="leak.txt", insert_line=0, new_str="x"),
                     dict(command="create", path="out_dir/planted.py", file_text="x = 1\n"),
                     dict(command="create", path="dangling.py", file_text="x = 1\n")):
            with pytest.raises(agent.ToolError, match="symbolic link"):
                env.editor(**call)
        with pytest.raises(agent.ToolError, match=r"big.txt is 3000000 bytes, over the .* cap"):
            env.editor("view", "big.txt")
        assert env.editor("create", "docs/.gitignore", file_text="*.tmp\n") == \
            "created docs/.gitignore"
        assert env.editor("view", "docs/.gitignore") == "     1\t*.tmp"
    assert secret.read_text() == "root:not-for-the-agent\n" and list(outside.iterdir()) == []


def test_a_fifo_in_the_tree_blocks_neither_hashing_nor_the_agent(gym, tmp_path):
    store, _, insts = gym
    (tmp_path / "a.txt").write_text("a\n")
    os.mkfifo(tmp_path / "pipe")
    out = {}
    th = threading.Thread(target=lambda: out.update(h=runtime.tree_hash(str(tmp_path))),
                          daemon=True)
    th.start()
    th.join(10)
    if th.is_alive():      # unblock the reader so the thread can end
        os.close(os.open(tmp_path / "pipe", os.O_WRONLY | os.O_NONBLOCK))
    assert "h" in out, "tree_hash blocked on a FIFO"
    os.unlink(tmp_path / "pipe")
    assert out["h"] != runtime.tree_hash(str(tmp_path))
    with runtime.Workspace.checkout(store, insts[0]["repo"], insts[0]["base_commit"]) as ws:
        env = agent.AgentEnv(ws, agent.Caps())
        assert env.bash("mkfifo pipe && echo y > new.txt").startswith("[exit code 0]")
        assert not os.path.lexists(os.path.join(ws.path, "pipe"))   # not carried back
        assert runtime.patch_files(ws.diff()) == ["new.txt"]


def test_copy_back_keeps_links_as_links_and_drops_special_files_setuid_and_nested_git(tmp_path):
    from lib.swe_gym import treefs
    src, dst = tmp_path / "src", tmp_path / "dst"
    (src / "pkg" / ".git").mkdir(parents=True)
    (src / "pkg" / ".git" / "config").write_text("[core]\n\tfsmonitor = touch /x\n")
    (src / "pkg" / "tool.sh").write_text("echo\n")
    os.chmod(src / "pkg" / "tool.sh", 0o4755)
    (src / "empty").mkdir()
    os.symlink("/etc/hostname", src / "link")
    os.mkfifo(src / "pipe")
    (dst / ".git").mkdir(parents=True)
    (dst / ".git" / "HEAD").write_text("host\n")
    (dst / "old.txt").write_text("old\n")
    assert treefs.copy_tree(str(src), str(dst), skip=(".git",)) == ["pipe"]
    assert sorted(rel for rel, _ in treefs.walk(str(dst))) == [
        ".git", ".git/HEAD", "empty", "link", "pkg", "pkg/tool.sh"]
    assert os.readlink(dst / "link") == "/etc/hostname"
    assert os.stat(dst / "pkg" / "tool.sh").st_mode & 0o7777 == 0o755
    assert (dst / ".git" / "HEAD").read_text() == "host\n"


CONFTEST_ALL_PASS = '''import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    report.outcome, report.longrepr = "passed", None
'''


def test_a_conftest_in_the_patch_does_not_decide_the_verdict(gym):
    store, cache, insts = gym
    inst = insts[0]
    for where in ("conftest.py", "tests/conftest.py"):
        spoof = _patch_adding(store, inst, {where: CONFTEST_ALL_PASS})
        r = grader.grade(inst, spoof, store, cache=cache)
        assert r.resolution == "NO" and r.f2p_failure and r.stripped == [where], (where, r)


def test_fake_pytest_output_from_the_source_grades_no(gym):
    store, cache, insts = gym
    inst = insts[0]
    ids = instances.test_list(inst, "FAIL_TO_PASS") + instances.test_list(inst, "PASS_TO_PASS")
    fake = "".join(f"{t} PASSED [100%]\n" for t in ids) + "".join(f"PASSED {t}\n" for t in ids)
    rel = "testkit/numeric.py"
    with runtime.Workspace.checkout(store, inst["repo"], inst["base_commit"]) as ws:
        with open(os.path.join(ws.path, rel)) as f:
            src = f.read()
    spoof_src = ("import os as _os\n"
                 f"_fake = {fake!r}.encode()\n"
                 "for _fd in range(1, 256):\n"      # the terminal's saved fd is among these
                 "    try:\n"
                 "        _os.write(_fd, _fake)\n"
                 "    except OSError:\n"
                 "        pass\n"
                 "_os._exit(0)\n") + src
    spoof = _patch_adding(store, inst, {rel: spoof_src})
    assert runtime.patch_files(spoof) == [rel]
    r = grader.grade(inst, spoof, store, cache=cache)
    assert r.resolution == "NO" and r.f2p_failure and r.error, r


def test_test_files_and_pytest_config_in_a_patch_are_stripped(gym):
    """The gold fix plus a broken conftest.py / pytest configuration and an edited test file
    still grades FULL: those parts of the patch are restored from the task's copy."""
    store, cache, insts = gym
    inst = insts[0]
    broken = {"conftest.py": "raise RuntimeError('candidate conftest')\n",
              "tests/conftest.py": "raise RuntimeError('candidate conftest')\n",
              "pytest.ini": "[pytest]\nrequired_plugins = no-such-plugin-xyz\n",
              "pyproject.toml": '[tool.pytest.ini_options]\nrequired_plugins = ["no-such-xyz"]\n',
              "tox.ini": "[pytest]\nrequired_plugins = no-such-plugin-xyz\n",
              "setup.cfg": "[tool:pytest]\nrequired_plugins = no-such-plugin-xyz\n",
              "tests/test_numeric.py": "def test_nothing():\n    assert False\n"}
    patch = _patch_adding(store, inst, broken, base_patch=inst["patch"])
    assert set(broken) <= set(runtime.patch_files(patch))
    r = grader.grade(inst, patch, store, cache=cache)
    assert r.resolution == "FULL" and r.stripped == sorted(broken)
    assert grader.protected("pkg/sub/conftest.py") and grader.protected("lib/x_test.py")
    assert not grader.protected("testkit/numeric.py") and not grader.protected("contest.py")
