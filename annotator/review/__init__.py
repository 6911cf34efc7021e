"""Review with rework (issue 20, section 3): reviewers accept or reject submitted units with comments
and issue tags; rejected units go back to their annotator; quality rounds; reopening one's own unit."""
