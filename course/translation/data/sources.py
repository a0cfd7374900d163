"""Dónde están los archivos de Multi30k (tarea 1, sin procesar) y si son los correctos.

Orden de búsqueda: ruta explícita, variable de entorno ``MULTI30K_DIR``, caché local
(``$XDG_CACHE_HOME/transformer-es/multi30k`` o ``~/.cache/transformer-es/multi30k``),
copia compartida ``../shared/multi30k`` junto al repositorio y, por último, descarga
desde el repositorio original ``multi30k/dataset`` a la caché. Cada archivo se
comprueba con su SHA-256 antes de usarse.
"""

import hashlib
import http.client
import os
import urllib.request
from collections.abc import Mapping
from pathlib import Path

import course
from course.labs import cache_root

SPLITS = ("train", "val", "test_2016_flickr")
LANGS = ("de", "en")
ENV_VAR = "MULTI30K_DIR"
BASE_URL = "https://raw.githubusercontent.com/multi30k/dataset/master/data/task1/raw"
DOWNLOAD_TIMEOUT_S = 60.0  # por archivo; el más grande ocupa ~0,6 MB

# Sumas SHA-256 de los .gz, copiadas de ../shared/multi30k/SHA256SUMS.
MULTI30K_SHA256 = {
    "test_2016_flickr.de.gz": "9204244e408ccb38d2a55cfcd344df15005fc42a07a6e55ca6c52b6ababb8cc8",
    "test_2016_flickr.en.gz": "611d361c6334bc7246101d48097c13cf5c4413c5befc793cc629934359d532d9",
    "train.de.gz": "726e39b2fa9eb9ffb6dc763fb35a179f80fae06ffc5d28b6ace5faa883de28a6",
    "train.en.gz": "d79cfa999dd4c51d2cb42499b6796d5a882c3a8a961923c25a898c90f8bbd56f",
    "val.de.gz": "f0cba2f995189cf5770f29a8a9a537a3ad3f51657ad873405082ff6863a5e75a",
    "val.en.gz": "14f7d25ddd868909a9213e361768460edcacdd6ab9d1e77b92560dc10c10dc28",
}


class DataError(Exception):
    """Error con los datos del curso; el mensaje, en español, dice qué hacer."""


def file_name(split: str, lang: str) -> str:
    """Nombre del archivo comprimido de una partición y un idioma, p. ej. ``train.de.gz``."""
    if split not in SPLITS:
        raise ValueError(f"Partición desconocida {split!r}; las válidas son {', '.join(SPLITS)}.")
    if lang not in LANGS:
        raise ValueError(f"Idioma desconocido {lang!r}; los válidos son {', '.join(LANGS)}.")
    return f"{split}.{lang}.gz"


def cache_dir() -> Path:
    """Carpeta de la caché de Multi30k: ``cache_root() / "multi30k"``."""
    return cache_root() / "multi30k"


def shared_dir() -> Path:
    """Copia compartida: ``../shared/multi30k`` visto desde la raíz del repositorio."""
    return Path(course.__file__).resolve().parents[1].parent / "shared" / "multi30k"


def sha256(path: Path) -> str:
    """Suma SHA-256 (hexadecimal) del contenido de ``path``."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def verify(directory: Path, sums: Mapping[str, str], advice: str) -> None:
    """Comprueba que cada archivo de ``sums`` está en ``directory`` con su SHA-256.

    Args:
        directory: carpeta con los archivos.
        sums: nombre de archivo -> SHA-256 esperado.
        advice: qué debe hacer quien lee el error (depende de dónde estaba la carpeta).

    Lanza ``DataError`` con el nombre del archivo que falta o no coincide.
    """
    if not directory.is_dir():
        raise DataError(f"La carpeta {directory} no existe. {advice}")
    for name, expected in sums.items():
        path = directory / name
        if not path.is_file():
            raise DataError(f"Falta el archivo {path}. {advice}")
        actual = sha256(path)
        if actual != expected:
            raise DataError(
                f"La suma SHA-256 de {path} no coincide: se esperaba {expected} y se obtuvo "
                f"{actual}. El archivo está dañado o no es el original. {advice}"
            )


def download(
    directory: Path,
    sums: Mapping[str, str],
    base_url: str = BASE_URL,
    timeout: float = DOWNLOAD_TIMEOUT_S,
) -> None:
    """Descarga a ``directory`` los archivos de ``sums`` que falten y verifica cada uno.

    Cada archivo se escribe primero con un nombre temporal y solo se renombra si su
    SHA-256 es el esperado, así que la caché nunca guarda una descarga a medias.
    Lanza ``DataError`` si la suma no coincide y ``OSError`` si la red falla.
    """
    directory.mkdir(parents=True, exist_ok=True)
    for name, expected in sums.items():
        target = directory / name
        if target.is_file():
            continue
        url = f"{base_url.rstrip('/')}/{name}"
        with urllib.request.urlopen(url, timeout=timeout) as response:
            data = response.read()
        actual = hashlib.sha256(data).hexdigest()
        if actual != expected:
            raise DataError(
                f"La descarga de {url} no coincide con su SHA-256: se esperaba {expected} y se "
                f"obtuvo {actual}. No se ha guardado. Revisa la conexión (¿un proxy o un portal "
                f"cautivo?) o descarga los archivos a mano y define {ENV_VAR}."
            )
        partial = target.with_name(f"{name}.{os.getpid()}.part")
        partial.write_bytes(data)
        partial.replace(target)  # atómico: otros procesos (DDP) ven el archivo entero o nada


def _complete(directory: Path, sums: Mapping[str, str]) -> bool:
    return all((directory / name).is_file() for name in sums)


def _user_dir(root: str | os.PathLike | None) -> tuple[Path, str] | None:
    """La carpeta que eligió el usuario (argumento o variable de entorno), si eligió una."""
    if root is not None:
        return Path(root).expanduser(), "Comprueba la ruta que has pasado como argumento."
    if os.environ.get(ENV_VAR):
        return Path(os.environ[ENV_VAR]).expanduser(), f"Comprueba la variable {ENV_VAR}."
    return None


def locate(
    root: str | os.PathLike | None = None,
    *,
    sums: Mapping[str, str] | None = None,
    allow_download: bool = True,
    base_url: str = BASE_URL,
    timeout: float = DOWNLOAD_TIMEOUT_S,
) -> Path:
    """Carpeta con los seis archivos de Multi30k, verificados por SHA-256.

    Args:
        root: carpeta elegida por el usuario; tiene prioridad sobre todo lo demás.
        sums: nombre de archivo -> SHA-256; por omisión ``MULTI30K_SHA256``. Las pruebas
            pasan aquí las sumas de un corpus generado (``synthetic_corpus``).
        allow_download: si es ``False``, no se intenta la descarga.
        base_url: dirección de la que se descargan los archivos (acepta ``file://``).
        timeout: segundos de espera de la red por archivo.

    Si el usuario elige una carpeta (``root`` o ``MULTI30K_DIR``), se usa esa o se
    explica por qué no sirve, sin buscar en otro sitio. Si no, se prueba la caché, la
    copia compartida y la descarga; si nada funciona, ``DataError`` enumera cada lugar.
    """
    sums = MULTI30K_SHA256 if sums is None else sums
    chosen = _user_dir(root)
    if chosen is not None:
        verify(chosen[0], sums, chosen[1])
        return chosen[0]
    cache, shared = cache_dir(), shared_dir()
    copies = (  # (carpeta, qué hacer si un archivo suyo está dañado), en orden de búsqueda
        (cache, "Borra ese archivo de la caché y vuelve a ejecutar para descargarlo de nuevo."),
        (
            shared,
            f"Avisa a quien mantiene la copia compartida o define {ENV_VAR} con una copia correcta.",
        ),
    )
    for directory, advice in copies:
        if _complete(directory, sums):
            verify(directory, sums, advice)
            return directory
    if allow_download:
        try:
            download(cache, sums, base_url, timeout)
            return cache
        except (OSError, http.client.HTTPException) as error:  # sin red, 404, disco lleno...
            reason = f"la descarga desde {base_url} falló: {error}"
    else:
        reason = "la descarga está desactivada (allow_download=False)"
    raise DataError(
        "No se encuentran los datos de Multi30k. Se ha buscado en:\n"
        f"  1. una ruta explícita: no se indicó ninguna;\n"
        f"  2. la variable de entorno {ENV_VAR}: no está definida;\n"
        f"  3. la caché {cache}: {_missing(cache, sums)};\n"
        f"  4. la copia compartida {shared}: {_missing(shared, sums)};\n"
        f"  5. {reason}.\n"
        f"Descarga los archivos {', '.join(sorted(sums))} de {BASE_URL} y define "
        f"{ENV_VAR} con la carpeta donde los guardes."
    )


def _missing(directory: Path, sums: Mapping[str, str]) -> str:
    if not directory.is_dir():
        return "la carpeta no existe"
    absent = [name for name in sums if not (directory / name).is_file()]
    return f"faltan {', '.join(absent)}"
