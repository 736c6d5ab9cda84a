"""The main window's actions (menu items and their keys), menus and toolbar, and the
Help > Controls text, which is generated from the actions so that it lists every key.

Everything here only builds widgets and wires them to the objects that act: the window's
``files`` (``file_actions.py``), ``painting`` (``seed_actions.py``), ``tools``
(``tool_actions.py``) and its view.
"""

from __future__ import annotations

import html

from PyQt6.QtCore import QPointF, Qt
from PyQt6.QtGui import (QAction, QActionGroup, QColor, QIcon, QKeySequence, QPainter, QPen,
                         QPixmap, QPolygonF)
from PyQt6.QtWidgets import (QCheckBox, QHBoxLayout, QLabel, QSizePolicy, QSlider, QToolBar,
                             QToolButton, QWidget)

from graphcut.io import BACKGROUND, FOREGROUND, NONE

from .boxes import BrushBox, LamBox
from .label_panel import swatch
from .labels import BACKGROUND_COLOUR, FIRST_COLOUR
from .model_choice import model_help, model_names, model_title
from .seed_actions import MAX_BRUSH_RADIUS
from .tools import TOOL_BOX, TOOL_LASSO

DEFAULT_BRUSH_RADIUS = 4
DEFAULT_OPACITY = 45  # percent

TOOL_NAMES = {FOREGROUND: "Foreground", BACKGROUND: "Background", NONE: "Eraser",
              TOOL_BOX: "Box", TOOL_LASSO: "Lasso"}
# The tools: (tool, key, icon colour, tooltip)
TOOLS = (
    (FOREGROUND, "F", FIRST_COLOUR, "Foreground brush (F): paints the object selected in the "
     "label list"),
    (BACKGROUND, "B", BACKGROUND_COLOUR, "Background brush (B)"),
    (NONE, "E", (230, 230, 230), "Eraser (E)"),
    (TOOL_BOX, "R", (255, 255, 255), "Box (R): drag a rectangle around the object; outside "
     "it is background"),
    (TOOL_LASSO, "L", (180, 180, 180), "Lasso (L): draw around the object, freehand; outside "
     "it is background"),
)

# What no action describes: the mouse, and the keys the canvas handles itself.
MOUSE_HELP = """\
<h3>Mouse</h3>
<ul>
<li><b>Left button</b>: paint with the selected tool: <b>Foreground</b> brush (the object
selected in the label list; object 1 is red), <b>Background</b> brush (blue) or
<b>Eraser</b>; or, with the <b>Box</b> tool, drag a rectangle around the object, with the
<b>Lasso</b> tool, draw around it freehand (it closes when you release). Outside the box or
lasso is background; a new one replaces it (undo brings it back).</li>
<li><b>Right button</b>: always paints background, whatever the tool.</li>
<li><b>Wheel</b>: zoom around the cursor.</li>
<li><b>Middle button</b> drag, or <b>Space</b> + left drag: pan.</li>
</ul>
"""

RESULT_HELP = """\
<h3>Result</h3>
<p>After every stroke the object is segmented again in the background (green fill, yellow
outline; View &gt; Result fill / outline colour change them). It needs at least one foreground
and one background seed. On large images segmented on the CPU a coarse preview shows first,
then the exact result replaces it. The slider next to <i>Result</i> sets the fill's opacity;
<i>&lambda;</i> (smoothness) trades boundary length against colour fit (its arrows: &times;1.1,
&times;0.9); the <i>Brush</i> radius is in image pixels. In these boxes Enter takes the typed
value and Escape restores the old one; both return the keys to the image. The status bar
shows how long you waited for the last result (from the end of the stroke to the exact result
on screen). Save overlay writes what the screen shows.</p>
{models}
<p>Several objects: add labels in the <i>Labels</i> list (rename by double-clicking, hide with
the check box, <i>Colour…</i>); the Foreground brush paints the selected one, and each object
is shown in its colour. Segment &gt; Clean up (on by default) keeps only the object parts
connected to its seeds (or the box's centre) and fills small holes.</p>
<h3>Files</h3>
<p>Open an image, or drop it on the window. Masks (0/255), label images (0 background, each
object its value: 1, 3, 4, ...) and seeds (label image: 0 none, 1 foreground, 2 background,
3, 4, ... further objects, with the settings in a JSON file of the same name that
<tt>graphcut segment</tt> and <tt>batch</tt> read) are saved as PNG or TIFF, never in a
lossy format. Saving while a
segmentation runs waits for it, so the file always matches the seeds on screen. Images larger
than the <i>Image size limit</i> (File menu) are refused as possible decompression bombs.</p>
"""


LAM_TIP = ("Smoothness λ: larger values give shorter, smoother boundaries (the arrows: ×1.1, "
           "×0.9; Enter or Escape returns to the canvas). It follows the appearance model's "
           "default until you change it; then your value stays for every model until Segment "
           "> Reset λ to the model default")


def _region_icon(tool) -> QIcon:
    """A dashed rectangle (Box) or a dashed loop (Lasso)."""
    pixmap = QPixmap(20, 20)
    pixmap.fill(QColor(0, 0, 0, 0))
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    pen = QPen(QColor(40, 40, 40), 1.6, Qt.PenStyle.DashLine)
    painter.setPen(pen)
    if tool == TOOL_BOX:
        painter.drawRect(3, 4, 14, 12)
    else:
        painter.drawPolygon(QPolygonF([QPointF(x, y) for x, y in (
            (4, 9), (8, 3), (15, 4), (17, 10), (12, 17), (5, 15))]))
    painter.end()
    return QIcon(pixmap)


def _make_action(window, text: str, slot, shortcut=None, *, checkable=False, tip=None,
                 toolbar_text=None) -> QAction:
    action = QAction(text, window)
    if shortcut is not None:
        shortcuts = shortcut if isinstance(shortcut, list) else [shortcut]
        action.setShortcuts([QKeySequence(s) for s in shortcuts])
        action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
    action.setCheckable(checkable)
    if tip:
        action.setStatusTip(tip)
    if toolbar_text:
        action.setIconText(toolbar_text)
    action.triggered.connect(slot)
    window.addAction(action)  # shortcuts work with the menu bar hidden, too
    return action


def build_actions(window) -> None:
    """Create the window's actions as attributes (``window.open_action``, ...)."""
    def a(*args, **kwargs):
        return _make_action(window, *args, **kwargs)

    w, view, files, seeds = window, window.view, window.files, window.painting
    w.open_action = a("&Open image…", files.open_image_dialog, QKeySequence.StandardKey.Open)
    w.load_seeds_action = a("&Load seeds…", files.load_seeds_dialog, "Ctrl+L")
    w.save_mask_action = a("&Save mask…", files.save_mask_dialog, "Ctrl+S")
    w.save_overlay_action = a("Save &overlay…", files.save_overlay_dialog, "Ctrl+Alt+S")
    w.save_seeds_action = a("Save s&eeds…", files.save_seeds_dialog, "Ctrl+Shift+S",
                            tip="The seeds, and the settings (JSON) to segment them again")
    w.save_labels_action = a("Save l&abels…", files.save_labels_dialog, "Ctrl+Alt+L",
                             tip="The result as a label image: 0 background, each object "
                             "its value")
    w.max_pixels_action = a("Image size &limit…", files.max_pixels_dialog,
                            tip="The largest image (in pixels) that Open accepts")
    w.quit_action = a("&Quit", w.close, QKeySequence.StandardKey.Quit)
    w.undo_action = a("&Undo", seeds.undo, "Ctrl+Z")
    w.redo_action = a("&Redo", seeds.redo, ["Ctrl+Shift+Z", "Ctrl+Y"])
    w.clear_action = a("&Clear seeds", seeds.clear, "Ctrl+Delete", toolbar_text="Clear")
    w.zoom_in_action = a("Zoom &in", lambda: view.zoom_by(1.25), ["Ctrl++", "Ctrl+="])
    w.zoom_out_action = a("Zoom &out", lambda: view.zoom_by(0.8), "Ctrl+-")
    w.fit_action = a("&Fit to window", view.fit, "Ctrl+0", toolbar_text="Fit")
    w.actual_size_action = a("&Actual size", view.actual_size, "Ctrl+1")
    w.overlay_action = a("Show &result", w._toggle_overlay, "O", checkable=True)
    w.overlay_action.setChecked(True)
    w.seeds_visible_action = a("Show &seeds", w._toggle_seeds, "S", checkable=True)
    w.seeds_visible_action.setChecked(True)
    w.fill_colour_action = a("Result &fill colour…", lambda: w._choose_colour("fill"),
                             tip="Colour of the object's fill (also in saved overlays)")
    w.outline_colour_action = a("Result o&utline colour…", lambda: w._choose_colour("outline"),
                                tip="Colour of the object's outline (also in saved overlays)")
    w.smaller_action = a("S&maller brush", lambda: seeds.change_brush(-1), "[")
    w.larger_action = a("&Larger brush", lambda: seeds.change_brush(+1), "]")
    w.clear_region_action = a("Clear &box and lasso", w.clear_region, "Shift+Delete",
                              tip="Remove the box or lasso (undoable)")
    w.cleanup_action = a("&Clean up result", lambda on: w.set_cleanup(on), "K",
                         checkable=True, tip="Keep only object parts connected to its seeds "
                         "and fill small holes")
    w.cleanup_action.setChecked(True)
    models = QActionGroup(window)  # exclusive: one appearance model at a time
    w.model_actions = {}
    for name in model_names():
        action = a(model_title(name), lambda _=False, n=name: w.set_model(n), checkable=True,
                   tip=f"Appearance model {name}: {model_help(name)}")
        action.setToolTip(model_help(name))  # shown on hover in the submenu
        models.addAction(action)
        w.model_actions[name] = action
    w.model_actions[window.document.options.model].setChecked(True)
    w.next_model_action = a("&Next appearance model", w.tools.next_model, "M",
                            tip="Switch to the next appearance model (" +
                            ", ".join(model_names()) + ")")
    w.reset_lam_action = a("&Reset λ to the model default", w.tools.reset_lam,
                           "Ctrl+Shift+R", tip="λ follows the appearance model's default "
                           "again, also when you switch models")
    w.add_label_action = a("&Add object label", lambda: w.label_panel.add_label(), "N",
                           tip="A new object label, painted by the Foreground brush")
    w.help_action = a("&Controls", w._show_controls, QKeySequence.StandardKey.HelpContents)
    w.about_action = a("&About", w._show_about)
    group = QActionGroup(window)
    w._tool_actions = {}
    for label, key, colour, tip in TOOLS:
        action = a(TOOL_NAMES[label],
                   lambda _=False, lab=label: w.set_tool(lab), key, checkable=True)
        action.setIcon(_region_icon(label) if label in (TOOL_BOX, TOOL_LASSO) else swatch(colour))
        action.setToolTip(f"{tip}; the right button always paints background")
        if label == FOREGROUND:
            action.setIconText("Object")  # short, for the toolbar
        group.addAction(action)
        w._tool_actions[label] = action
    w._tool_actions[FOREGROUND].setChecked(True)


def build_menus(window) -> None:
    """Fill ``window``'s menu bar (File, Edit, Tools, Segment, View, Help) with its actions.

    Parameters
    ----------
    window : MainWindow
        The window whose ``*_action`` attributes (built by ``build_actions``) are placed in
        menus, with separators between groups.
    """
    bar = window.menuBar()
    w = window
    menus = {
        "&File": [w.open_action, w.load_seeds_action, None, w.save_mask_action,
                  w.save_overlay_action, w.save_labels_action, w.save_seeds_action, None,
                  w.max_pixels_action, None,
                  w.quit_action],
        "&Edit": [w.undo_action, w.redo_action, None, w.clear_action],
        "&Tools": [*w._tool_actions.values(), None, w.smaller_action, w.larger_action, None,
                   w.add_label_action],
        "&Segment": [w.clear_region_action, None, w.cleanup_action, None,
                     ("Appearance &model", [*w.model_actions.values(), None,
                                            w.next_model_action]), w.reset_lam_action],
        "&View": [w.zoom_in_action, w.zoom_out_action, w.fit_action, w.actual_size_action, None,
                  w.overlay_action, w.seeds_visible_action, None, w.fill_colour_action,
                  w.outline_colour_action],
        "&Help": [w.help_action, w.about_action],
    }
    for title, actions in menus.items():
        _fill_menu(bar.addMenu(title), actions)


def _fill_menu(menu, actions) -> None:
    """Add ``actions`` to ``menu``: None is a separator, ``(title, actions)`` a submenu."""
    for action in actions:
        if action is None:
            menu.addSeparator()
        elif isinstance(action, tuple):
            submenu = menu.addMenu(action[0])
            submenu.setToolTipsVisible(True)  # each entry's help on hover
            _fill_menu(submenu, action[1])
        else:
            menu.addAction(action)


def build_toolbar(window, lam: float) -> QToolBar:
    """The toolbar: tools, brush, λ, undo/redo/clear, result visibility and opacity, fit.

    Its labels are short (``iconText``, no label on the opacity slider) so that it fits a
    window of 900 pixels."""
    w, view = window, window.view
    bar = QToolBar("Tools", window)
    bar.setMovable(False)
    bar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
    window.addToolBar(bar)
    for tool, action in w._tool_actions.items():
        if tool in (TOOL_BOX, TOOL_LASSO):  # drawn icons, no text: the toolbar fits 900 px
            button = QToolButton()
            button.setDefaultAction(action)
            button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonIconOnly)
            bar.addWidget(button)
        else:
            bar.addAction(action)
    bar.addSeparator()
    w._brush_box = BrushBox()
    w._brush_box.hand_focus_to(view)
    w._brush_box.setRange(1, MAX_BRUSH_RADIUS)
    w._brush_box.setValue(DEFAULT_BRUSH_RADIUS)
    w._brush_box.setSuffix(" px")
    w._brush_box.setToolTip("Brush radius in image pixels ([ and ] change it; Enter or "
                            "Escape returns to the canvas)")
    w._brush_box.valueChanged.connect(view.set_brush_radius)
    view.set_brush_radius(DEFAULT_BRUSH_RADIUS)
    bar.addWidget(_labelled("Brush", w._brush_box))
    w._lam_box = LamBox()
    w._lam_box.hand_focus_to(view)
    w._lam_box.setDecimals(2)
    w._lam_box.setRange(0.0, 10000.0)
    w._lam_box.setValue(lam)
    w._lam_box.setToolTip(LAM_TIP)
    w.tools.watch_lam_box(w._lam_box)
    bar.addWidget(_labelled("λ", w._lam_box))
    bar.addSeparator()
    bar.addAction(w.undo_action)
    bar.addAction(w.redo_action)
    bar.addAction(w.clear_action)
    bar.addSeparator()
    w._overlay_box = QCheckBox("Result")
    w._overlay_box.setChecked(True)
    w._overlay_box.setToolTip("Show the segmentation (O)")
    w._overlay_box.toggled.connect(w.overlay_action.setChecked)
    w._overlay_box.toggled.connect(w._apply_overlay_visibility)
    bar.addWidget(w._overlay_box)
    w._opacity_slider = QSlider(Qt.Orientation.Horizontal)
    w._opacity_slider.setRange(0, 100)
    w._opacity_slider.setValue(DEFAULT_OPACITY)
    w._opacity_slider.setFixedWidth(70)
    w._opacity_slider.setToolTip("Opacity of the result's fill")
    w._opacity_slider.valueChanged.connect(
        lambda value: w.set_result_style(opacity=value / 100.0))
    w.set_result_style(opacity=DEFAULT_OPACITY / 100.0)
    bar.addWidget(w._opacity_slider)  # after "Result": its opacity (tooltip), no label
    bar.addSeparator()
    bar.addAction(w.fit_action)
    return bar


def _labelled(text: str, widget: QWidget) -> QWidget:
    box = QWidget()
    box.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Preferred)
    layout = QHBoxLayout(box)
    layout.setContentsMargins(4, 0, 4, 0)
    layout.addWidget(QLabel(text))
    layout.addWidget(widget)
    return box


def _models_help() -> str:
    """The Controls help's paragraph on the appearance models and the λ rule."""
    models = "".join(f"<li><b>{html.escape(_plain(model_title(name)))}</b>: "
                     f"{html.escape(model_help(name))}</li>" for name in model_names())
    return ("<p>Segment &gt; Appearance model chooses how the seeds' colours become each "
            "label's costs (<b>M</b>: the next model):</p><ul>" + models + "</ul><p><i>&lambda;"
            "</i> shows the model's own default (with a box or lasso the library may choose a "
            "heavier one itself, as without the app), and the result equals <tt>graphcut "
            "segment --model NAME</tt> with default options. Once you change &lambda;, your "
            "value stays, for every model, until Segment &gt; Reset &lambda; to the model "
            "default.</p>")


def shortcut_text(action: QAction) -> str:
    """The action's keys as the platform writes them, e.g. ``"Ctrl+Shift+Z or Ctrl+Y"``."""
    return " or ".join(key.toString(QKeySequence.SequenceFormat.NativeText)
                       for key in action.shortcuts() if not key.isEmpty())


def _plain(text: str) -> str:
    """A menu text without its mnemonic ``&`` and trailing ellipsis."""
    return text.replace("&&", "\0").replace("&", "").replace("\0", "&").rstrip("…")


def controls_help(window) -> str:
    """Help > Controls as HTML: the mouse, then every action that has a key, menu by menu
    (actions in no menu last), then what the result and the files are."""
    listed, sections = set(), [MOUSE_HELP, "<h3>Keys</h3>", "<table>"]

    def rows(title: str, actions) -> None:
        keyed = [action for action in actions
                 if not action.isSeparator() and shortcut_text(action)]
        if not keyed:
            return
        sections.append(f"<tr><td colspan='2'><br><i>{html.escape(title)}</i></td></tr>")
        for action in keyed:
            listed.add(id(action))
            sections.append(f"<tr><td><b>{html.escape(shortcut_text(action))}</b>&nbsp;&nbsp;"
                            f"</td><td>{html.escape(_plain(action.text()))}</td></tr>")

    def menu_rows(title: str, menu) -> None:  # a menu's keys, then its submenus'
        rows(title, menu.actions())
        for action in menu.actions():
            if action.menu() is not None:
                menu_rows(f"{title} > {_plain(action.menu().title())}", action.menu())

    for menu_action in window.menuBar().actions():
        if menu_action.menu() is not None:
            menu_rows(_plain(menu_action.menu().title()), menu_action.menu())
    rows("Other", [action for action in window.actions() if id(action) not in listed])
    sections.append("</table>")
    sections.append(RESULT_HELP.replace("{models}", _models_help()))
    return "\n".join(sections)
