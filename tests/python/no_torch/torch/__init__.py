# Put first on PYTHONPATH by tests that run `python -m ember` without torch
# (test_commands.py): `import torch` fails as where torch is not installed.
raise ImportError("torch is hidden by tests/python/no_torch")
