"""graphite-web settings for the parity suite (GRAPHITE_SETTINGS_MODULE).

graphite.settings imports this module in place of graphite.local_settings.
Everything lives in PARITY_GRAPHITE_DIR, the run's work directory. Reads go
to the whisper files only (no carbonlink): the runner waits until carbon has
written everything, so what graphite-web answers does not depend on when
carbon's writer thread ran.
"""

import os

_dir = os.environ["PARITY_GRAPHITE_DIR"]

SECRET_KEY = "parity-suite-not-secret"
TIME_ZONE = "UTC"
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
STORAGE_DIR = _dir
WHISPER_DIR = os.path.join(_dir, "whisper")
STANDARD_DIRS = [WHISPER_DIR]
LOG_DIR = os.path.join(_dir, "log", "webapp")
INDEX_FILE = os.path.join(_dir, "index")
CARBONLINK_HOSTS = []
# No caching of finds, tags or renders between the suite's requests.
DEFAULT_CACHE_DURATION = 0
FIND_CACHE_DURATION = 0
TAGDB_CACHE_DURATION = 0
DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": os.path.join(_dir, "graphite.db"),
    }
}
