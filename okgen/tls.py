"""The process's one TLS context, used by the fetcher and the LLM clients alike."""

from __future__ import annotations

import logging
import os
import threading
from typing import Any

log = logging.getLogger(__name__)

_TLS_LOCK = threading.Lock()
_TLS: Any = None
_TLS_READY = threading.Event()


def _ca_file() -> str | None:
    cafile = os.environ.get("SSL_CERT_FILE")
    if not cafile:
        try:
            import certifi

            cafile = certifi.where()
        except ImportError:  # pragma: no cover - certifi comes with aiohttp and httpx2
            cafile = None
    return cafile


def _load_cas(ctx: Any) -> None:
    try:
        cafile = _ca_file()
        if cafile:
            ctx.load_verify_locations(cafile=cafile)
        else:  # pragma: no cover - no certifi and no SSL_CERT_FILE
            ctx.load_default_certs()
    except Exception as e:  # pragma: no cover - an unreadable bundle: TLS handshakes will fail, loudly
        log.warning("could not load CA certificates: %s", e)
    finally:
        _TLS_READY.set()


def tls_context(wait: bool = True) -> Any:
    """The TLS context shared by every HTTP client of the process (certifi's CA bundle, or the
    file named by ``SSL_CERT_FILE``, else the system default), verifying certificates and
    host names.

    Loading the CA bundle takes ~50 ms; it runs in a thread (OpenSSL releases the GIL), started
    by the first call. ``wait=False`` returns the context at once, for clients of plain-http
    servers that need it only if a server redirects them to https: a handshake before the
    bundle is loaded fails verification, it is never accepted unverified.
    """
    global _TLS
    import ssl

    with _TLS_LOCK:
        if _TLS is None:
            _TLS = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)  # CERT_REQUIRED and check_hostname by default
            threading.Thread(target=_load_cas, args=(_TLS,), name="okgen-ca-load", daemon=True).start()
    if wait:
        _TLS_READY.wait()
    return _TLS
