"""Likert ratings, 1 to 5 (X-LeBench seed 002 App. D; VUDG seed 004 Sec. 4.5). Being built for
issue 8; see the issue for what it must do."""

METRICS = ("score",)
PRIMARY = None
PRESETS: dict = {}
