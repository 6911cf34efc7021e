"""python manage.py ordering_scores: the name kept from before studies had kinds; the same as study_scores."""

from annotator.studies.management.commands.study_scores import Command as StudyCommand


class Command(StudyCommand):
    help = "Alias of study_scores (kept from the frame-ordering experiments). " + StudyCommand.help
