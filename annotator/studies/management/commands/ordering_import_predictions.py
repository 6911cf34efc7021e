"""python manage.py ordering_import_predictions: the name kept from before studies had kinds; the same as study_import_predictions."""

from annotator.studies.management.commands.study_import_predictions import Command as StudyCommand


class Command(StudyCommand):
    help = "Alias of study_import_predictions (kept from the frame-ordering experiments). " + StudyCommand.help
