"""The participant's page of a study: instructions, practice items with feedback, then the
assigned trials one at a time, in the widget of the study's kind (``static/js/studies/``)."""

from django.contrib.auth.decorators import login_required
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.text import capfirst

from annotator import markdown
from annotator.errors import Forbidden
from annotator.projects import access
from annotator.studies import services
from annotator.studies.models import Study

DEFAULT_INSTRUCTIONS = {
    "ordering": """\
You will see frames taken from a short video (or short texts), **shuffled**. Put them back in the order
they happened, earliest on the left.

- Drag an element to move it, or use the keyboard: **Tab** to an element, **←** / **→** to move it.
- Elements marked *pinned* are already in their right place and cannot move.
- Press **Enter** (or the button) to answer. Each answer is timed from the moment everything is shown.
- The first few questions are practice: you will see the right order afterwards. They do not count.
""",
    "mcq": """\
You will see a question about one or more video clips, with several options. Pick the one right option.

- Play the clips as often as you like. Press **1**-**9** or **A**-**Z**, or click, to choose; **Enter** answers.
- Some questions have a **time limit**: a countdown shows the time left. When it ends, the page moves on
  and the question counts as not answered.
- The first few questions are practice: you will see the right option afterwards. They do not count.
""",
    "open_answer": """\
You will see a question about a video clip. Watch the clip and write your answer in a few words or a
sentence. Nobody else's answer is shown, and yours is not shown to anyone answering after you.

- **Ctrl+Enter** answers.
""",
    "likert": """\
You will rate items on a scale from **1** (lowest) to **5** (highest), on the criterion named above each
item. Press **1**-**5** or click to choose; **Enter** answers.

- A low score may need a short written justification (X-LeBench asks for one below 3): the page says when.
""",
}


def _study(request, slug, name, roles):
    project, _ = access.require(request.user, roles, slug=slug)
    return get_object_or_404(Study, project=project, name=name)


@login_required
def take(request, slug: str, name: str):
    """Take part in a study. A reload resumes the same trial, with the time already spent.

    Only the project's annotators take part: anyone else who is a member (who can see or export the
    truth) gets this page with status 403 and the reason in plain words, and no trial script. The
    page's configuration reaches its script through ``json_script`` (the CSP forbids inline script).
    """
    study = _study(request, slug, name, access.ALL_ROLES)
    title = capfirst(study.get_kind_display())
    try:
        services.require_participant_role(request.user, study.project)
    except Forbidden as exc:
        return render(request, "studies/take.html", {"study": study, "title": title, "refusal": str(exc)}, status=403)
    # ``kind`` names the page's widget module (static/js/studies/<kind>.js).
    config = {"kind": study.kind, "enrollUrl": f"/api/studies/{study.pk}/enroll/",
              "currentUrl": f"/api/studies/{study.pk}/current/",
              "shownUrl": "/api/trials/{id}/shown/", "answerUrl": "/api/trials/{id}/answer/"}
    return render(request, "studies/take.html", {
        "study": study, "title": title, "config": config,
        "instructions_html": markdown.render(study.instructions or DEFAULT_INSTRUCTIONS[study.kind]),
    })


@login_required
def ordering_alias(request, slug: str, name: str, rest: str = ""):
    """The pages' old addresses (``/projects/SLUG/ordering/NAME/...``) lead to the study's."""
    return redirect(f"/projects/{slug}/studies/{name}/{rest}")
