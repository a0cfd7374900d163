"""El idioma del entorno también para lo que traduce el servidor de JupyterLab.

``python -m course jupyter-es`` pone ``es_ES`` como idioma por omisión del entorno en
``overrides.json``. El navegador lo respeta, pero el servidor (jupyterlab_server 2.28)
decide su idioma leyendo solo la configuración propia del usuario y, si no hay, el del
sistema: con un sistema en inglés, el editor de configuración mostraba títulos y
descripciones en inglés (el servidor las traduce con el ``.mo`` del paquete de idioma) y el
menú Idioma decía «Spanish (Spain)». Esta extensión del servidor hace que, cuando el usuario
no ha elegido idioma, el servidor use el de ``overrides.json``; lo que el usuario elija
sigue mandando. La activa ``python -m course jupyter-es``.
"""

from jupyterlab_server.settings_utils import SchemaHandler, get_settings
from jupyterlab_server.translation_utils import L10N_SCHEMA_NAME, is_valid_locale

ORIGINAL = SchemaHandler.get_current_locale


def _user_choice(handler: SchemaHandler) -> str | None:
    """El idioma que el usuario eligió en su configuración, o ``None``."""
    try:
        settings, _ = get_settings(
            handler.app_settings_dir,
            handler.schemas_dir,
            handler.settings_dir,
            schema_name=L10N_SCHEMA_NAME,
            overrides=handler.overrides,
            labextensions_path=handler.labextensions_path,
        )
    except Exception:  # noqa: BLE001 (sin configuración legible: como si no eligió)
        return None
    return settings.get("settings", {}).get("locale")


def current_locale(handler: SchemaHandler) -> str:
    """El idioma del usuario; si no eligió, el de ``overrides.json``; si no, el del sistema."""
    environment = (handler.overrides or {}).get(L10N_SCHEMA_NAME, {}).get("locale")
    if environment and is_valid_locale(environment) and _user_choice(handler) is None:
        return environment
    return ORIGINAL(handler)


def _jupyter_server_extension_points():
    return [{"module": "course.jupyter.server_locale"}]


def _load_jupyter_server_extension(serverapp) -> None:
    SchemaHandler.get_current_locale = current_locale
