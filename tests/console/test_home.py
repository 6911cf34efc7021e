"""The home page's hint under "Verify QA pairs" names the keys the verify page binds (it said "K keep,
M modify" while K moves to the previous pair and M turns the sound on)."""

import re

from tests.conftest import REPO


def test_the_homes_verify_hint_names_the_keys_the_verify_page_binds(client, annotator):
    client.force_login(annotator)
    page = client.get("/").content.decode()
    hint = re.search(r"keyboard: ([^<]*)", page).group(1)
    said = {action: key.lower() for key, action in re.findall(r"\b([A-Z]) (keep|modify|delete)\b", hint)}
    keys = (REPO / "static" / "js" / "verify" / "keys.js").read_text()
    bound = {action: key for key, action in re.findall(r'\b(\w): \(\) => decide\("(\w+)"\)', keys)}
    assert said == bound == {"keep": "v", "modify": "e", "delete": "x"}
