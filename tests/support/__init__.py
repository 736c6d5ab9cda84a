"""Test support: stand-ins (fake CuPy, the GPU kernel model, the preflow model), oracles
and synthetic images. pyproject's pytest ``pythonpath`` puts this folder on sys.path, so
tests import its modules by name (``import fake_cupy``, ``from oracle import ...``)."""
