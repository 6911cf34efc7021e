"""Files that exports ship beside their data (package data): the lmms-eval task's ``utils.py`` and the
VLMEvalKit dataset class. Each is a real module with its own tests (tests/qa/test_export_files.py)."""
