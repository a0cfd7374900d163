"""Archivos de las entregas: se extraen de un zip o se copian sin confiar en ellos.

Una entrega es hostil: un zip puede descomprimirse en gigas (una bomba zip), traer
enlaces simbólicos o rutas absolutas o con ``..`` que escriben fuera del destino, y una
carpeta puede tener enlaces a ``/etc/passwd`` o ``/dev/zero`` (simbólicos, o duros a un
archivo del curso), o una FIFO que bloquea a quien la lee. Aquí solo pasan archivos
normales de un solo nombre, leídos por trozos y contados mientras se escriben, hasta un
límite: el tamaño que declara el zip sirve para rechazar antes, nunca para aceptar.

Límites (constantes del módulo, para cambiarlos en un sitio):

- un cuaderno, 20 MiB: uno de estos laboratorios con todas sus salidas ocupa pocos MB;
- cualquier otro archivo (la ejecución completa del laboratorio 7), 512 MiB: ``best.pt``
  y ``average.pt`` de la receta ``gpu`` (unos 10 M de parámetros) ocupan decenas de MB
  y ``last.pt``, que no se entrega, 116 MB;
- un zip entero, lo que ocupa el zip más 2 GiB: los puntos de control apenas se
  comprimen, así que un zip de clase grande cabe, y uno pequeño no llena el disco;
- ninguna entrada de más de 1 MiB puede descomprimirse más de 100 veces (los
  cuadernos y textos reales se quedan en torno a 10; una bomba zip llega a 1000);
- una carpeta copiada con :func:`copy_regular_files`, 2 GiB.
"""

import os
import stat
import zipfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from fnmatch import fnmatch
from pathlib import Path, PurePosixPath
from typing import BinaryIO

from course.labs import CourseError

MIB = 1 << 20
GIB = 1 << 30
NOTEBOOK_MAX_BYTES = 20 * MIB
ENTRY_MAX_BYTES = 512 * MIB
ZIP_EXTRA_BYTES = 2 * GIB
MAX_RATIO = 100
RATIO_FREE_BYTES = 1 * MIB
COPY_MAX_BYTES = 2 * GIB
CHUNK = 1 * MIB


class Refused(Exception):
    """Un archivo que no se extrae ni se copia; el mensaje dice por qué, en español."""


@dataclass(frozen=True)
class Entry:
    """Una entrada del zip que ``accept`` quiso: dónde quedó o por qué no se extrajo."""

    name: str  # el nombre dentro del zip
    path: Path | None  # destino; None si la ruta misma se rechazó
    refused: str = ""  # vacío si se extrajo


def extract_zip(
    archive: Path, target: Path, accept: Callable[[tuple[str, ...]], Path | None]
) -> Iterator[Entry]:
    """Extrae en ``target`` las entradas de ``archive`` a las que ``accept`` da destino.

    ``accept`` recibe las partes de la ruta de una entrada (sin ``..`` ni ``/`` inicial)
    y devuelve su destino relativo a ``target``, o ``None`` para saltarla en silencio.
    Los destinos ``.ipynb`` tienen el límite de un cuaderno; los demás, el de un archivo.
    Devuelve una :class:`Entry` por entrada extraída o rechazada; un rechazo no detiene
    las demás. Un zip que no existe o no es un zip da :class:`CourseError`.
    """
    if not archive.is_file():
        raise CourseError(f"No existe el archivo zip «{archive}».")
    try:
        bundle = zipfile.ZipFile(archive)
    except zipfile.BadZipFile:
        raise CourseError(f"«{archive}» no es un archivo zip válido.") from None
    left = archive.stat().st_size + ZIP_EXTRA_BYTES
    with bundle:
        for info in bundle.infolist():
            parts = PurePosixPath(info.filename).parts
            if info.is_dir() or not parts:
                continue
            if info.filename.startswith("/") or ".." in parts:
                yield Entry(info.filename, None, "la ruta sale de la carpeta de destino")
                continue
            relative = accept(parts)
            if relative is None:
                continue
            path = target / relative
            try:
                left -= _extract(bundle, info, path, left)
            except Refused as refusal:
                yield Entry(info.filename, path, str(refusal))
                continue
            yield Entry(info.filename, path)


def _extract(bundle: zipfile.ZipFile, info: zipfile.ZipInfo, path: Path, left: int) -> int:
    """Escribe una entrada en ``path``; devuelve los bytes escritos."""
    kind = stat.S_IFMT(info.external_attr >> 16)
    if kind == stat.S_IFLNK:
        raise Refused("es un enlace simbólico")
    if kind not in (0, stat.S_IFREG):
        raise Refused("no es un archivo normal")
    limit, reason = _limit(info, path, left)
    if info.file_size > limit:
        raise Refused(reason)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)  # falla si una entrada anterior es archivo
        with bundle.open(info) as source:
            return _stream(source, path, limit, reason)
    except (
        zipfile.BadZipFile,
        zlib.error,
        EOFError,
        OSError,
        RuntimeError,
        NotImplementedError,
    ) as error:
        raise Refused(f"no se puede extraer ({error})") from None


def _limit(info: zipfile.ZipInfo, path: Path, left: int) -> tuple[int, str]:
    """Cuánto puede ocupar la entrada al descomprimirla y qué se dice si se pasa."""
    cap = NOTEBOOK_MAX_BYTES if path.suffix == ".ipynb" else ENTRY_MAX_BYTES
    ratio = max(RATIO_FREE_BYTES, info.compress_size * MAX_RATIO)
    return min(
        (cap, f"ocupa más de {_size(cap)} al descomprimir"),
        (ratio, f"se descomprime más de {MAX_RATIO} veces (¿una bomba zip?)"),
        (left, "el zip entero ocupa demasiado al descomprimirlo"),
    )


def _stream(source: BinaryIO, path: Path, limit: int, reason: str) -> int:
    """Copia ``source`` a ``path`` por trozos; si pasa de ``limit`` bytes, rechaza.

    Nunca escribe más de ``limit`` bytes, y si algo falla a mitad no deja el archivo.
    """
    written = 0
    with open(path, "wb") as out:
        try:
            while chunk := source.read(CHUNK):
                written += len(chunk)
                if written > limit:
                    raise Refused(reason)
                out.write(chunk)
        except BaseException:
            path.unlink()
            raise
    return written


def _size(count: int) -> str:
    if count < MIB:
        return f"{count / 1024:g} KiB"
    return f"{count // GIB} GiB" if count % GIB == 0 else f"{count / MIB:g} MiB"


def copy_regular_files(
    source: Path, target: Path, max_bytes: int = COPY_MAX_BYTES, ignore: tuple[str, ...] = ()
) -> list[str]:
    """Copia la carpeta ``source`` en ``target`` con solo sus archivos normales.

    Nunca sigue un enlace simbólico (tampoco si ``source`` lo es), ni abre FIFOs o
    dispositivos, ni copia enlaces duros (:func:`refusal`); los nombres que casan con
    algún patrón de ``ignore`` se saltan en cualquier nivel. Entre todos los archivos no se
    copian más de ``max_bytes``. Devuelve una nota en español por cada cosa omitida (vacía
    si se copió todo).
    """
    notes = []
    budget = max_bytes
    for relative, refusal in _walk(source.parent, Path(source.name), ignore):
        try:
            if refusal:
                raise Refused(refusal)
            copied = target / relative.relative_to(source.name)
            budget -= _copy_file(source.parent / relative, copied, budget, max_bytes)
        except Refused as error:
            notes.append(f"se omite «{relative.as_posix()}»: {error}")
    return notes


def _walk(base: Path, relative: Path, ignore: tuple[str, ...]) -> Iterator[tuple[Path, str]]:
    """``(ruta relativa a base, motivo de rechazo o "")`` de cada archivo bajo ``relative``."""
    info = os.lstat(base / relative)
    if not stat.S_ISDIR(info.st_mode):
        yield relative, refusal(info)
        return
    for name in sorted(os.listdir(base / relative)):
        if not any(fnmatch(name, pattern) for pattern in ignore):
            yield from _walk(base, relative / name, ignore)


def refusal(info: os.stat_result) -> str:
    """Por qué no se lee un archivo entregado (vacío si es un archivo normal y solo suyo).

    Un enlace duro (más de un nombre para el mismo archivo) se rechaza siempre: podría ser
    otro nombre de ``source/…ipynb`` o de la entrega de un compañero, y desde aquí no se
    sabe cuál es el otro nombre. ``nbgrader collect`` y el zip crean archivos de un nombre.
    """
    if stat.S_ISLNK(info.st_mode):
        return "es un enlace simbólico"
    if not stat.S_ISREG(info.st_mode):
        return "no es un archivo normal"
    if info.st_nlink > 1:
        return f"es un enlace duro (el mismo archivo tiene {info.st_nlink} nombres)"
    return ""


def open_regular(path: Path) -> BinaryIO:
    """Abre para leer un archivo entregado sin seguir enlaces ni bloquearse en una FIFO.

    Lo que se comprueba es el archivo ya abierto (``fstat``), no el nombre: cambiarlo por
    un enlace entre la comprobación y la lectura no sirve. Si no es un archivo normal de
    un solo nombre, :class:`Refused`.
    """
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        info = _lstat(path)
        raise Refused(refusal(info) if info and refusal(info) else "no se puede abrir") from None
    stream = open(descriptor, "rb")
    reason = refusal(os.fstat(descriptor))
    if reason:
        stream.close()
        raise Refused(reason)
    return stream


def _lstat(path: Path) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except OSError:
        return None


def read_regular(path: Path, limit: int) -> bytes:
    """El contenido de un archivo entregado (:func:`open_regular`) si no pasa de ``limit``."""
    with open_regular(path) as stream:
        data = stream.read(limit + 1)
    if len(data) > limit:
        raise Refused(f"ocupa más de {_size(limit)}")
    return data


def linked_folder(base: Path, relative: Path) -> str:
    """Si alguna carpeta de ``relative`` (dentro de ``base``) es un enlace: el motivo."""
    for depth in range(1, len(relative.parts) + 1):
        info = _lstat(base.joinpath(*relative.parts[:depth]))
        if info is not None and stat.S_ISLNK(info.st_mode):
            return f"«{Path(*relative.parts[:depth]).as_posix()}» es un enlace simbólico"
    return ""


def _copy_file(source: Path, target: Path, budget: int, max_bytes: int) -> int:
    """Copia un archivo normal (se comprueba otra vez ya abierto); devuelve los bytes."""
    with open_regular(source) as stream:
        target.parent.mkdir(parents=True, exist_ok=True)
        return _stream(stream, target, budget, f"la carpeta pasa de {_size(max_bytes)}")
