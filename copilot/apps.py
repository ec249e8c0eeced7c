from django.apps import AppConfig


class CopilotConfig(AppConfig):
    name = "copilot"
    verbose_name = "Copilot"
