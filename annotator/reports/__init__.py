"""The benchmark report (issue 18, part 5): humans beside models per split, with intervals and paired
comparisons, as JSON, CSV, LaTeX or Markdown. The top of the domain layer: it reads studies,
evaluations, QA pairs and videos; no domain app imports it."""
