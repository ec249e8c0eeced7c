"""Admin for datasets, versions, import jobs and incidents. Actions call services."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME, ActionForm
from django.db.models import QuerySet
from django.http import HttpRequest
from django.template.response import TemplateResponse

from incidentdesk.errors import IncidentDeskError, NotFoundError
from incidents import dataset_selectors, selectors, services
from incidents.importers import FORMATS
from incidents.models import Dataset, DatasetVersion, ImportJob, Incident, RetiredReport


def confirmation(
    model_admin: admin.ModelAdmin[Any],
    request: HttpRequest,
    queryset: QuerySet[Any],
    diffs: list[dataset_selectors.VersionDiff],
    action: str,
    confirm_label: str,
) -> TemplateResponse:
    """The page between an activate/rollback action and its effect: counts and ids that change."""
    context = {
        **model_admin.admin_site.each_context(request),
        "title": f"{confirm_label.removeprefix('Yes, ').capitalize()}: what changes",
        "opts": model_admin.model._meta,
        "diffs": diffs,
        "queryset": queryset,
        "action": action,
        "confirm_label": confirm_label,
        "action_checkbox_name": ACTION_CHECKBOX_NAME,
    }
    template = "admin/incidents/version_change_confirmation.html"
    return TemplateResponse(request, template, context)


class DatasetOfKindFilter(admin.SimpleListFilter):
    """The dataset filter, listing only datasets of this admin's kind (not all of them)."""

    title = "dataset"
    parameter_name = "dataset"
    kind = Dataset.Kind.INCIDENTS

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[Any, str]]:
        datasets = dataset_selectors.dataset_list().filter(kind=self.kind)
        return [(dataset.pk, dataset.name) for dataset in datasets]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        value = self.value() or ""
        return queryset.filter(version__dataset_id=int(value)) if value.isdigit() else queryset


class IncidentDatasetFilter(DatasetOfKindFilter):
    kind = Dataset.Kind.INCIDENTS


@admin.register(Dataset)
class DatasetAdmin(admin.ModelAdmin[Dataset]):
    list_display = ["name", "kind", "slug", "created_at"]
    prepopulated_fields = {"slug": ["name"]}
    search_fields = ["name"]
    actions = ["rollback"]

    @admin.action(description="Roll back to the previously active version (shows what changes)")
    def rollback(
        self, request: HttpRequest, queryset: QuerySet[Dataset]
    ) -> TemplateResponse | None:
        if not request.POST.get("confirmed"):
            previous = [dataset_selectors.dataset_version_previous(dataset=d) for d in queryset]
            diffs = [dataset_selectors.dataset_version_diff(version=v) for v in previous if v]
            return confirmation(self, request, queryset, diffs, "rollback", "Yes, roll back")
        for dataset in queryset:
            try:
                version = services.dataset_version_rollback(dataset=dataset)
            except IncidentDeskError as exc:
                self.message_user(request, exc.message, messages.ERROR)
            else:
                self.message_user(request, f"{dataset.name}: {version.label} is active again")
        return None


@admin.register(DatasetVersion)
class DatasetVersionAdmin(admin.ModelAdmin[DatasetVersion]):
    list_display = [
        "dataset", "label", "status", "row_count", "chunk_count",
        "embedding_model", "created_at", "activated_at",
    ]  # fmt: skip
    list_filter = ["status", "dataset"]
    list_select_related = ["dataset"]
    raw_id_fields = ["created_by"]
    readonly_fields = [
        "status", "row_count", "chunk_count", "embedding_model",
        "embedding_dimensions", "created_at", "activated_at",
    ]  # fmt: skip
    actions = ["activate", "archive"]

    @admin.action(description="Activate (shows what changes; the active version is archived)")
    def activate(
        self, request: HttpRequest, queryset: QuerySet[DatasetVersion]
    ) -> TemplateResponse | None:
        if not request.POST.get("confirmed"):
            versions = queryset.select_related("dataset")
            diffs = [dataset_selectors.dataset_version_diff(version=v) for v in versions]
            return confirmation(self, request, queryset, diffs, "activate", "Yes, activate")
        self._apply(request, queryset, services.dataset_version_activate, "is active")
        return None

    @admin.action(description="Archive (take out of search)")
    def archive(self, request: HttpRequest, queryset: QuerySet[DatasetVersion]) -> None:
        self._apply(request, queryset, services.dataset_version_archive, "is archived")

    def _apply(
        self,
        request: HttpRequest,
        queryset: QuerySet[DatasetVersion],
        service: Callable[..., DatasetVersion],
        outcome: str,
    ) -> None:
        """Run a service on each version; report each result or error."""
        for version in queryset.select_related("dataset"):
            try:
                service(version=version)
            except IncidentDeskError as exc:
                self.message_user(request, exc.message, messages.ERROR)
            else:
                self.message_user(request, f"{version.dataset.name} {version.label} {outcome}")


class ImportJobForm(forms.ModelForm[ImportJob]):
    """Upload a file into a (new) version of a dataset."""

    dataset = forms.ModelChoiceField(queryset=Dataset.objects.all())
    version_label = forms.CharField(
        max_length=100, help_text="A new label builds a new version next to the active one."
    )
    file_format = forms.ChoiceField(
        choices=[("", "from the file extension"), *[(f, f) for f in FORMATS]], required=False
    )

    class Meta:
        model = ImportJob
        fields = ["file", "file_format", "activate_when_done"]


IMPORT_REFRESH_SECONDS = 2
RUNNING_JOB_STATUSES = {ImportJob.Status.QUEUED, ImportJob.Status.RUNNING}


def _progress_context(job: ImportJob) -> dict[str, Any]:
    """What the job page's progress bar needs; a queued or running job refreshes the page."""
    percent = round(100 * job.rows_done / job.rows_total) if job.rows_total else 0
    return {
        "job_running": job.status in RUNNING_JOB_STATUSES,
        "percent": min(percent, 100),
        "refresh_seconds": IMPORT_REFRESH_SECONDS,
    }


@admin.register(ImportJob)
class ImportJobAdmin(admin.ModelAdmin[ImportJob]):
    list_display = [
        "pk", "version", "status", "rows_done", "rows_total", "rows_failed", "created_at",
    ]  # fmt: skip
    list_filter = ["status"]
    list_select_related = ["version__dataset"]
    readonly_fields = [
        "version", "status", "rows_done", "rows_total", "rows_failed", "created",
        "updated", "unchanged", "message", "errors", "attempts", "created_by", "created_at",
        "finished_at",
    ]  # fmt: skip

    change_form_template = "admin/incidents/importjob/change_form.html"

    def has_change_permission(self, request: HttpRequest, obj: ImportJob | None = None) -> bool:
        """A job, once queued, is a record: its page shows progress, never a form to edit
        (a finished job offered "Change file" and Save, which did nothing useful)."""
        return obj is None and super().has_change_permission(request, obj)

    def change_view(
        self,
        request: HttpRequest,
        object_id: str,
        form_url: str = "",
        extra_context: dict[str, Any] | None = None,
    ) -> Any:
        context = dict(extra_context or {})
        try:
            job = dataset_selectors.import_job_get(job_id=int(object_id))
        except (ValueError, NotFoundError):
            job = None  # the admin answers an unknown id itself
        if job is not None:
            context.update(_progress_context(job))
        return super().change_view(request, object_id, form_url, context)

    def get_form(
        self,
        request: HttpRequest,
        obj: ImportJob | None = None,
        change: bool = False,
        **kwargs: Any,
    ) -> type[forms.ModelForm[ImportJob]]:
        if obj is None:
            kwargs["form"] = ImportJobForm
        return super().get_form(request, obj, change, **kwargs)

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        return self.readonly_fields if obj else []

    def get_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        if obj is None:
            return ["dataset", "version_label", "file", "file_format", "activate_when_done"]
        return ["file", *self.readonly_fields]

    def save_model(self, request: HttpRequest, obj: ImportJob, form: Any, change: bool) -> None:
        if change:
            return
        data = form.cleaned_data
        job = services.import_job_create(
            dataset=data["dataset"],
            label=data["version_label"],
            uploaded_file=data["file"],
            file_format=data["file_format"],
            activate=data["activate_when_done"],
            user=request.user,  # type: ignore[arg-type]
        )
        obj.pk = job.pk
        obj.refresh_from_db()  # the admin logs and redirects to the saved job


class ReviewActionForm(ActionForm):
    """The action bar with the incident a merge joins; the other actions ignore it."""

    into = forms.CharField(required=False, max_length=64, label="Merge into incident id")


@admin.register(Incident)
class IncidentAdmin(admin.ModelAdmin[Incident]):
    list_display = [
        "incident_id", "title", "impacted_application", "occurred_at", "severity",
        "review_status", "version",
    ]  # fmt: skip
    list_filter = [
        "review_status", "version__status", IncidentDatasetFilter, "impacted_application",
        "category", "severity", "repeat_incident",
    ]  # fmt: skip
    list_select_related = ["version__dataset"]
    search_fields = ["incident_id", "title", "impacted_application", "root_cause"]
    date_hierarchy = "occurred_at"
    raw_id_fields = ["version"]
    readonly_fields = ["content_hash", "review_status", "created_at", "updated_at"]
    action_form = ReviewActionForm
    actions = ["accept_reports", "merge_reports", "discard_reports"]

    class Media:
        css = {"all": ["css/admin.css"]}  # the merge field at phone width

    @admin.action(description="Accept the selected reports (reported → reviewed)")
    def accept_reports(self, request: HttpRequest, queryset: QuerySet[Incident]) -> None:
        self._review(request, queryset, services.incident_review_accept, "accepted")

    @admin.action(description="Merge the selected reports into the incident id given")
    def merge_reports(self, request: HttpRequest, queryset: QuerySet[Incident]) -> None:
        # Any dash, any case, as on the review page: ids get pasted from chat messages.
        target = selectors.incident_get_by_searched_id(request.POST.get("into", ""))
        if target is None:
            self.message_user(request, "No active incident has that id.", messages.ERROR)
            return
        merge = partial(services.incident_review_merge, into=target)
        self._review(request, queryset, merge, f"merged into {target.incident_id}")

    @admin.action(description="Discard the selected reports (deletes them)")
    def discard_reports(self, request: HttpRequest, queryset: QuerySet[Incident]) -> None:
        self._review(request, queryset, services.incident_review_discard, "discarded")

    def _review(
        self,
        request: HttpRequest,
        queryset: QuerySet[Incident],
        service: Callable[..., Any],
        outcome: str,
    ) -> None:
        """A review service per selected incident; one already reviewed is an error line."""
        for incident in queryset.select_related("version__dataset"):
            try:
                service(incident=incident)
            except IncidentDeskError as exc:
                self.message_user(request, exc.message, messages.ERROR)
            else:
                self.message_user(request, f"{incident.incident_id} {outcome}")


@admin.register(RetiredReport)
class RetiredReportAdmin(admin.ModelAdmin[RetiredReport]):
    """What became of merged and discarded reports: a record, written only by the review."""

    list_display = ["incident_id", "title", "outcome", "merged_into", "retired_at"]
    list_filter = ["outcome"]
    search_fields = ["incident_id", "title", "merged_into"]
    readonly_fields = ["incident_id", "title", "outcome", "merged_into", "retired_at"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
