"""The annotation team (issue 20, sections 5 and 6): active time from heartbeats, per-annotator
figures (a registry other apps add figures to), pay rates and the pay report."""
