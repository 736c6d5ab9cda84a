"""Part 3 of bench/bench_interactive.py: the app's window offscreen, strokes made with real
mouse events (QTest); per stroke the time from the mouse release to the exact mask handed to
the view, the paint times of the result layer and the event loop's largest gap."""

from __future__ import annotations

import os
import time
from pathlib import Path


# ----- 3. the window, offscreen, with real mouse events ---------------------------------------
def bench_window(image_path: Path, seeds_path: Path, strokes, device):
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PyQt6.QtCore import QElapsedTimer, QEventLoop, QPointF, Qt, QTimer
    from PyQt6.QtTest import QTest
    from PyQt6.QtWidgets import QApplication

    from graphcut.gui import MainWindow
    window = MainWindow(device=device)
    window.confirm_discard = lambda: True
    errors = []
    window.show_error = lambda title, text: errors.append(text)
    window.resize(1100, 780)
    window.show()
    app = QApplication.instance()
    clock, gaps, busy = QElapsedTimer(), [], []
    clock.start()
    last = [clock.nsecsElapsed(), time.thread_time()]

    def tick():
        now, cpu = clock.nsecsElapsed(), time.thread_time()
        gaps.append((now - last[0]) / 1e9)  # wall time between two ticks of a 1 ms timer
        busy.append(cpu - last[1])  # of which this (the GUI) thread ran on a CPU
        last[:] = now, cpu

    timer = QTimer()
    timer.setInterval(1)
    timer.timeout.connect(tick)

    def run_until(condition, timeout=600.0):
        """Run the event loop until ``condition()``; gaps count only while it runs."""
        last[:] = clock.nsecsElapsed(), time.thread_time()
        timer.start()
        loop, poll = QEventLoop(), QTimer()
        deadline = time.monotonic() + timeout
        poll.setInterval(2)
        poll.timeout.connect(lambda: (condition() or time.monotonic() > deadline) and loop.quit())
        poll.start()
        loop.exec()
        poll.stop()
        timer.stop()

    shown, handling = [], []

    def on_outcome(outcome, handle=window._on_outcome):
        started = time.perf_counter()
        handle(outcome)
        handling.append(time.perf_counter() - started)
        shown.append((started, outcome))

    window._on_outcome = on_outcome
    started = time.perf_counter()
    window.open_image(image_path)
    run_until(lambda: window._controller._exact.backend != "")
    opened = time.perf_counter() - started
    window.load_seeds(seeds_path)  # the bundled seeds, then the strokes
    run_until(lambda: not window.is_busy())
    viewport = window.view.viewport()
    latencies, previews, mouse = [], [], []
    gaps.clear()
    busy.clear()
    handling.clear()
    window.view.result_layer.paint_seconds.clear()
    for stroke in strokes:
        label, points, _ = stroke
        window.set_tool(label)
        positions = [window.view.mapFromScene(QPointF(c + 0.5, r + 0.5)) for r, c in points]
        before = len(shown)
        pressed = time.perf_counter()
        QTest.mousePress(viewport, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier,
                         positions[0])
        for position in positions[1:]:
            QTest.mouseMove(viewport, position)
        QTest.mouseRelease(viewport, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier,
                           positions[-1])
        released = time.perf_counter()
        mouse.append(released - pressed)
        if not window.is_busy():
            continue  # the stroke changed nothing
        run_until(lambda: not window.is_busy())
        answers = [(t, o) for t, o in shown[before:] if o.number == window._controller.latest]
        exact = [t for t, o in answers if o.factor == 1]
        preview = [t for t, o in answers if o.factor > 1]
        if exact:
            latencies.append(exact[-1] - released)
        if preview:
            previews.append(preview[0] - released)
    app.processEvents()
    paint_times = list(window.view.result_layer.paint_seconds)
    timer.stop()
    window.shutdown()
    window.close()
    return {"opened": opened, "latencies": latencies[1:], "first": latencies[:1],
            "previews": previews[1:], "paint": paint_times, "max_gap": max(gaps, default=0),
            "max_busy": max(busy, default=0),
            "handling": handling, "mouse": mouse, "errors": errors}
