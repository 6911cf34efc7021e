"""python manage.py ordering_items: the name kept from before studies had kinds; the same as study_items."""

from annotator.studies.management.commands.study_items import Command as StudyCommand


class Command(StudyCommand):
    help = "Alias of study_items (kept from the frame-ordering experiments). " + StudyCommand.help
