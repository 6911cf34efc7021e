"""Onboarding, qualification and gold checks (issue 20, sections 1 and 2)."""
