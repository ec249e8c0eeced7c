"""Incident, dataset, version and import-job endpoints. One view per operation.

Each view validates its input, makes one selector or service call and
serializes the result; access rules: reads for any signed-in user (active
versions only), writes and everything about datasets for staff.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.permissions import IsAdminUser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from incidentdesk.api import inputs
from incidentdesk.api.auth import current_user
from incidentdesk.api.pagination import paginated_response
from incidentdesk.api.schema import conflict, filter_parameters, paginated
from incidents import dataset_selectors, selectors, services
from incidents.api.serializers import (
    DatasetSerializer,
    DatasetVersionSerializer,
    ImportJobSerializer,
    IncidentDetailSerializer,
    IncidentFieldsSerializer,
    IncidentFiltersSerializer,
    IncidentHitSerializer,
    IncidentSerializer,
    VersionDiffSerializer,
)
from incidents.filtersets import DatasetVersionFilter, ImportJobFilter, IncidentFilter
from incidents.importers import FORMATS
from incidents.models import Dataset

INCIDENTS = ["incidents"]
DATASETS = ["datasets (staff)"]


class VersionQuerySerializer(serializers.Serializer[Any]):
    version = serializers.IntegerField(
        required=False, min_value=1, help_text="Read from this version (staff: any version)."
    )


# --- incidents ----------------------------------------------------------------------


class IncidentListApi(APIView):
    @extend_schema(
        operation_id="incidents_list",
        tags=INCIDENTS,
        summary="List incidents (active versions), newest first",
        parameters=filter_parameters(IncidentFilter),
        responses=paginated(IncidentSerializer, "PaginatedIncidentList"),
    )
    def get(self, request: Request) -> Response:
        incidents = selectors.incident_list_for_user(
            user=current_user(request), filters=request.query_params
        )
        return paginated_response(
            queryset=incidents, serializer_class=IncidentSerializer, request=request, view=self
        )


class IncidentCreateApi(APIView):
    permission_classes = [IsAdminUser]

    class InputSerializer(IncidentFieldsSerializer):
        version = serializers.IntegerField(min_value=1, help_text="The dataset version to add to.")
        incident_id = serializers.CharField(max_length=64)

        class Meta:
            ref_name = "IncidentCreate"

    @extend_schema(
        operation_id="incidents_create",
        tags=INCIDENTS,
        summary="Add an incident to a version (staff); it is embedded at once",
        request=InputSerializer,
        responses={201: IncidentDetailSerializer, **conflict()},
    )
    def post(self, request: Request) -> Response:
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        fields = dict(data.validated_data)
        version = dataset_selectors.dataset_version_get(version_id=fields.pop("version"))
        incident = services.incident_create(version=version, data=fields)
        return Response(IncidentDetailSerializer(incident).data, status=status.HTTP_201_CREATED)


class IncidentSearchApi(APIView):
    class InputSerializer(serializers.Serializer[Any]):
        q = serializers.CharField(max_length=2000, help_text="A question or symptoms.")
        limit = serializers.IntegerField(min_value=1, max_value=50, default=5)

    class OutputSerializer(serializers.Serializer[Any]):
        query = serializers.CharField()
        filters = IncidentFiltersSerializer(help_text="Filters understood from the question.")
        applied_filters = IncidentFiltersSerializer(help_text="Filters the results honour.")
        expanded = serializers.BooleanField(help_text="The filters matched nothing: loosened.")
        results = IncidentHitSerializer(many=True)

        class Meta:
            ref_name = "IncidentSearch"

    @extend_schema(
        operation_id="incidents_search",
        tags=INCIDENTS,
        summary="Hybrid search (filters from the question, then vector + full text)",
        parameters=[InputSerializer],
        responses=OutputSerializer,
    )
    def get(self, request: Request) -> Response:
        data = self.InputSerializer(data=request.query_params)
        data.is_valid(raise_exception=True)
        search = selectors.incident_search_similar(
            query=data.validated_data["q"], limit=data.validated_data["limit"]
        )
        return Response(self.OutputSerializer(search.as_data()).data)


class IncidentDetailApi(APIView):
    @extend_schema(
        operation_id="incidents_retrieve",
        tags=INCIDENTS,
        summary="One incident by id (any dash, any case)",
        parameters=[VersionQuerySerializer],  # documented with its bounds
        responses=IncidentDetailSerializer,
    )
    def get(self, request: Request, incident_id: str) -> Response:
        query = VersionQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        incident = selectors.incident_get_for_user(
            incident_id=incident_id,
            user=current_user(request),
            version_id=query.validated_data.get("version"),
        )
        return Response(IncidentDetailSerializer(incident).data)


class IncidentUpdateApi(APIView):
    permission_classes = [IsAdminUser]

    class InputSerializer(IncidentFieldsSerializer):
        class Meta:
            ref_name = "IncidentUpdate"

    @extend_schema(
        operation_id="incidents_partial_update",
        tags=INCIDENTS,
        summary="Change fields of an incident (staff); it is re-embedded at once",
        parameters=[VersionQuerySerializer],  # documented with its bounds
        request=InputSerializer,
        responses={200: IncidentDetailSerializer, **conflict()},
    )
    def patch(self, request: Request, incident_id: str) -> Response:
        query = VersionQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        data = self.InputSerializer(data=request.data, partial=True)
        data.is_valid(raise_exception=True)
        incident = selectors.incident_get_for_user(
            incident_id=incident_id,
            user=current_user(request),
            version_id=query.validated_data.get("version"),
        )
        incident = services.incident_update(incident=incident, changes=dict(data.validated_data))
        return Response(IncidentDetailSerializer(incident).data)


# --- datasets, versions, import jobs (staff) ----------------------------------------


class DatasetListApi(APIView):
    permission_classes = [IsAdminUser]

    @extend_schema(
        operation_id="datasets_list",
        tags=DATASETS,
        summary="List datasets with their active version",
        responses=paginated(DatasetSerializer, "PaginatedDatasetList"),
    )
    def get(self, request: Request) -> Response:
        return paginated_response(
            queryset=dataset_selectors.dataset_list(),
            serializer_class=DatasetSerializer,
            request=request,
            view=self,
        )


class DatasetCreateApi(APIView):
    permission_classes = [IsAdminUser]

    class InputSerializer(inputs.InputSerializer):
        name = serializers.CharField(max_length=200)
        kind = serializers.ChoiceField(choices=Dataset.Kind.choices)
        description = serializers.CharField(required=False, allow_blank=True, default="")

        class Meta:
            ref_name = "DatasetCreate"

    @extend_schema(
        operation_id="datasets_create",
        tags=DATASETS,
        summary="Create an empty dataset",
        request=InputSerializer,
        responses={201: DatasetSerializer, **conflict()},
    )
    def post(self, request: Request) -> Response:
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        dataset = services.dataset_create(**data.validated_data)
        dataset = dataset_selectors.dataset_get(slug=dataset.slug)  # with its counts
        return Response(DatasetSerializer(dataset).data, status=status.HTTP_201_CREATED)


class DatasetDetailApi(APIView):
    permission_classes = [IsAdminUser]

    @extend_schema(
        operation_id="datasets_retrieve",
        tags=DATASETS,
        summary="One dataset",
        responses=DatasetSerializer,
    )
    def get(self, request: Request, slug: str) -> Response:
        return Response(DatasetSerializer(dataset_selectors.dataset_get(slug=slug)).data)


class DatasetUploadApi(APIView):
    permission_classes = [IsAdminUser]
    parser_classes = [MultiPartParser, FormParser]

    class InputSerializer(inputs.InputSerializer):
        file = serializers.FileField(help_text="JSON Lines, a JSON array or CSV.")
        version_label = serializers.CharField(
            max_length=100, required=False, default="", help_text="Default: the next vN."
        )
        file_format = serializers.ChoiceField(
            choices=["", *FORMATS], required=False, default="", help_text="Default: extension."
        )
        activate = inputs.StrictBooleanField(
            required=False, default=False, help_text="Activate when every row imported."
        )

        class Meta:
            ref_name = "DatasetUpload"

    @extend_schema(
        operation_id="datasets_uploads_create",
        tags=DATASETS,
        summary="Upload a file into a new version; a background job imports it",
        request={"multipart/form-data": InputSerializer},
        responses={202: ImportJobSerializer, **conflict()},
    )
    def post(self, request: Request, slug: str) -> Response:
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        job = services.dataset_upload(
            dataset=dataset_selectors.dataset_get(slug=slug),
            uploaded_file=values["file"],
            label=values["version_label"],
            file_format=values["file_format"],
            activate=values["activate"],
            user=current_user(request),
        )
        job = dataset_selectors.import_job_get(job_id=job.pk)
        return Response(ImportJobSerializer(job).data, status=status.HTTP_202_ACCEPTED)


class DatasetRollbackApi(APIView):
    permission_classes = [IsAdminUser]

    @extend_schema(
        operation_id="datasets_rollback",
        tags=DATASETS,
        summary="Re-activate the version that was active before the current one",
        request=None,
        responses={200: DatasetVersionSerializer, **conflict()},
    )
    def post(self, request: Request, slug: str) -> Response:
        dataset = dataset_selectors.dataset_get(slug=slug)
        version = services.dataset_version_rollback(dataset=dataset)
        return Response(DatasetVersionSerializer(version).data)


class DatasetVersionListApi(APIView):
    permission_classes = [IsAdminUser]

    @extend_schema(
        operation_id="dataset_versions_list",
        tags=DATASETS,
        summary="List dataset versions, newest first per dataset",
        parameters=filter_parameters(DatasetVersionFilter),
        responses=paginated(DatasetVersionSerializer, "PaginatedDatasetVersionList"),
    )
    def get(self, request: Request) -> Response:
        return paginated_response(
            queryset=dataset_selectors.dataset_version_list(filters=request.query_params),
            serializer_class=DatasetVersionSerializer,
            request=request,
            view=self,
        )


class DatasetVersionDetailApi(APIView):
    permission_classes = [IsAdminUser]

    @extend_schema(
        operation_id="dataset_versions_retrieve",
        tags=DATASETS,
        summary="One dataset version",
        responses=DatasetVersionSerializer,
    )
    def get(self, request: Request, version_id: int) -> Response:
        version = dataset_selectors.dataset_version_get(version_id=version_id)
        return Response(DatasetVersionSerializer(version).data)


class DatasetVersionDiffApi(APIView):
    permission_classes = [IsAdminUser]

    @extend_schema(
        operation_id="dataset_versions_diff",
        tags=DATASETS,
        summary="What activating this version would change (rows added, removed, changed)",
        responses=VersionDiffSerializer,
    )
    def get(self, request: Request, version_id: int) -> Response:
        version = dataset_selectors.dataset_version_get(version_id=version_id)
        diff = dataset_selectors.dataset_version_diff(version=version)
        return Response(VersionDiffSerializer(diff).data)


class DatasetVersionActivateApi(APIView):
    permission_classes = [IsAdminUser]

    @extend_schema(
        operation_id="dataset_versions_activate",
        tags=DATASETS,
        summary="Make this version the one search reads (the active one is archived)",
        request=None,
        responses={200: DatasetVersionSerializer, **conflict()},
    )
    def post(self, request: Request, version_id: int) -> Response:
        version = dataset_selectors.dataset_version_get(version_id=version_id)
        version = services.dataset_version_activate(version=version)
        return Response(DatasetVersionSerializer(version).data)


class ImportJobListApi(APIView):
    permission_classes = [IsAdminUser]

    @extend_schema(
        operation_id="import_jobs_list",
        tags=DATASETS,
        summary="List import jobs, newest first",
        parameters=filter_parameters(ImportJobFilter),
        responses=paginated(ImportJobSerializer, "PaginatedImportJobList"),
    )
    def get(self, request: Request) -> Response:
        return paginated_response(
            queryset=dataset_selectors.import_job_list(filters=request.query_params),
            serializer_class=ImportJobSerializer,
            request=request,
            view=self,
        )


class ImportJobDetailApi(APIView):
    permission_classes = [IsAdminUser]

    @extend_schema(
        operation_id="import_jobs_retrieve",
        tags=DATASETS,
        summary="An import job's progress, outcome and row errors",
        responses=ImportJobSerializer,
    )
    def get(self, request: Request, job_id: int) -> Response:
        return Response(ImportJobSerializer(dataset_selectors.import_job_get(job_id=job_id)).data)
