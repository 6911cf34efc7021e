"""Export pseudonyms come from PSEUDONYM_KEY alone: rotating SECRET_KEY renames nobody."""

from annotator.qa.selectors import pseudonym


def test_the_pseudonym_is_the_documented_hmac_of_the_pseudonym_key(settings):
    settings.PSEUDONYM_KEY = "k"
    # hmac(sha256("annotator-pseudonym:k"), "42"), first 12 hex digits.
    assert pseudonym(42) == "ann-50245c9f0626"


def test_rotating_the_secret_key_renames_nobody(settings):
    before = [pseudonym(uid) for uid in (1, 2, 42)]
    settings.SECRET_KEY = "a-completely-different-secret-key-after-rotation-0123456789"
    assert [pseudonym(uid) for uid in (1, 2, 42)] == before


def test_rotating_the_pseudonym_key_renames_everyone(settings):
    before = [pseudonym(uid) for uid in (1, 2, 42)]
    settings.PSEUDONYM_KEY = "a-new-pseudonym-key"
    after = [pseudonym(uid) for uid in (1, 2, 42)]
    assert all(a != b for a, b in zip(before, after))
