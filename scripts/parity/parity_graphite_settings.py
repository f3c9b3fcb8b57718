"""graphite-web settings for the parity suite (GRAPHITE_SETTINGS_MODULE).

graphite.settings imports this module in place of graphite.local_settings.
Everything lives in PARITY_GRAPHITE_DIR, the run's work directory. The
runner asks only once carbon's cache is empty, so what graphite-web answers
comes from the whisper files and does not depend on when carbon's writer
thread ran. CARBONLINK_HOSTS still names carbon's cache-query port
(PARITY_CARBONLINK): with no host, graphite-web 1.1.10 logs an exception
with a traceback for every series it reads, which triples its run time.
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
CARBONLINK_HOSTS = [os.environ["PARITY_CARBONLINK"]]
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
