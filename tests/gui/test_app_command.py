"""``graphcut gui`` names the system libraries Qt's xcb plugin lacks instead of letting Qt
stop with its platform-plugin error (issue #22)."""

from click.testing import CliRunner

from graphcut.cli import main
from graphcut.commands import gui as command

PRESENT = "/usr/lib/x86_64-linux-gnu/libpresent.so"


def test_find_library_fallback_lists_what_is_missing():
    absent = {"xcb-cursor", "xcb-keysyms"}
    missing = command.missing_qt_libraries(
        lambda name: None if name in absent else PRESENT, ldd=lambda plugin: None)
    assert missing == ["libxcb-cursor.so.0", "libxcb-keysyms.so.1"]
    assert command.missing_qt_libraries(lambda name: PRESENT, ldd=lambda plugin: None) == []


def test_ldd_of_the_plugin_is_preferred(tmp_path):
    plugin = tmp_path / "libqxcb.so"
    plugin.write_bytes(b"")
    seen = []
    missing = command.missing_qt_libraries(
        lambda name: None, plugin=plugin,
        ldd=lambda path: seen.append(path) or ["libxcb-icccm.so.4"])
    assert missing == ["libxcb-icccm.so.4"] and seen == [plugin]


def test_the_command_names_the_missing_libraries_and_packages(monkeypatch):
    from graphcut.gui import app
    runs = []
    monkeypatch.setattr(app, "run", lambda *args, **kwargs: runs.append(kwargs) or 0)
    monkeypatch.setattr(command, "uses_xcb", lambda: True)
    monkeypatch.setattr(command, "missing_qt_libraries",
                        lambda: ["libxcb-cursor.so.0", "libxcb-icccm.so.4"])
    result = CliRunner().invoke(main, ["gui", "--device", "cpu"])
    assert result.exit_code == 1 and runs == []
    assert "libxcb-cursor.so.0" in result.output
    assert "apt-get install libxcb-cursor0 libxcb-icccm4" in result.output


def test_other_platforms_are_not_checked():
    assert not command.uses_xcb({"QT_QPA_PLATFORM": "offscreen"}, "linux")
    assert not command.uses_xcb({}, "darwin")
    assert not command.uses_xcb({"WAYLAND_DISPLAY": "wayland-0",
                                 "XDG_SESSION_TYPE": "wayland"}, "linux")
    assert command.uses_xcb({}, "linux") and command.uses_xcb({"QT_QPA_PLATFORM": "xcb"},
                                                              "linux")


def test_lam_is_the_models_default_unless_given_and_the_model_is_chosen(monkeypatch):
    """Without --lam the window's λ follows the appearance model (run gets None); --lam is
    the user's λ; --model picks the model to start with."""
    from graphcut.gui import app
    runs = []
    monkeypatch.setattr(app, "run", lambda *args, **kwargs: runs.append(kwargs) or 0)
    monkeypatch.setattr(command, "uses_xcb", lambda: False)
    for args, lam, model in (([], None, None), (["--lam", "3"], 3.0, None),
                             (["--model", "learned"], None, "learned")):
        result = CliRunner().invoke(main, ["gui", "--device", "cpu", *args])
        assert result.exit_code == 0, result.output
        run = runs.pop()
        assert run["lam"] == lam and run["model"] == model
    result = CliRunner().invoke(main, ["gui", "--model", "forest"])
    assert result.exit_code == 2 and "forest" in result.output and runs == []
