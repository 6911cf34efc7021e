from django.apps import AppConfig


class ProjectsConfig(AppConfig):
    name = "annotator.projects"
    label = "projects"
