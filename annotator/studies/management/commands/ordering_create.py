"""python manage.py ordering_create --project SLUG --preset ego-flight --name NAME: the name kept from
before studies had kinds; the same as ``study_create --kind ordering``."""

from annotator.studies.management.commands.study_create import Command as StudyCommand


class Command(StudyCommand):
    help = "Alias of study_create --kind ordering (kept from the frame-ordering experiments). " + StudyCommand.help
    kind = "ordering"
