from django.apps import AppConfig


class DemoConfig(AppConfig):
    """The demo's seeding (``make demo``: ``manage.py demo_setup``), at the top of the layers: it may
    import every app, and nothing imports it (issue 23)."""

    name = "annotator.demo"
    label = "demo"
    verbose_name = "demo seeding"
