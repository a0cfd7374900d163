"""Construye la extensión de JupyterLab del curso en ``course/jupyter/labextension/``.

Uso: ``python extension/build.py`` (sin npm ni red). La salida es la de una extensión
federada de JupyterLab 4: ``package.json`` con ``jupyterlab._build`` y un
``static/remoteEntry.<hash>.js`` que es un contenedor de Module Federation de webpack
(``get``/``init``, la interfaz de los «dynamic remote containers» con que JupyterLab carga
sus extensiones) escrito a mano: el complemento no importa nada de JupyterLab, así que no
hay módulos que compartir ni nada que empaquetar. Misma entrada, mismos bytes: una prueba
vuelve a construir y compara con lo que hay en el repositorio.
"""

import hashlib
import json
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUTPUT = HERE.parent / "course" / "jupyter" / "labextension"

CONTAINER = """\
// Generado por extension/build.py a partir de extension/src/plugin.js y
// extension/textos_es.json: no lo edites a mano.
var _JUPYTERLAB;
(_JUPYTERLAB = typeof _JUPYTERLAB === "undefined" ? {{}} : _JUPYTERLAB)[{name}] = (function () {{
  "use strict";
  const TEXTS = {texts};
  const PREFIXES = {prefixes};
  const FILE_TYPES = {file_types};
  const OUTPUTS = {outputs};
  const ENDINGS = {endings};
  const SETTINGS = {settings};
  const SETTINGS_PREFIXES = {settings_prefixes};
{plugin}
  return {{
    init: function () {{ return Promise.resolve(); }},
    get: function (module) {{
      if (module !== "./extension") {{
        return Promise.reject(new Error("módulo desconocido: " + module));
      }}
      return Promise.resolve(function () {{ return {{ __esModule: true, default: plugin }}; }});
    }},
  }};
}})();
"""


def files() -> dict[str, str]:
    """Ruta relativa dentro de la extensión -> contenido."""
    package = json.loads((HERE / "package.json").read_text(encoding="utf-8"))
    strings = json.loads((HERE / "textos_es.json").read_text(encoding="utf-8"))
    plugin = (HERE / "src" / "plugin.js").read_text(encoding="utf-8")
    code = CONTAINER.format(
        name=json.dumps(package["name"]),
        texts=json.dumps(strings["texts"], ensure_ascii=False, indent=2, sort_keys=True),
        prefixes=json.dumps(strings["prefixes"], ensure_ascii=False, sort_keys=True),
        file_types=json.dumps(strings["fileTypes"], ensure_ascii=False, sort_keys=True),
        outputs=json.dumps(strings["outputs"], ensure_ascii=False, sort_keys=True),
        endings=json.dumps(strings["endings"], ensure_ascii=False, sort_keys=True),
        settings=json.dumps(strings["settings"], ensure_ascii=False, sort_keys=True),
        settings_prefixes=json.dumps(
            strings["settingsPrefixes"], ensure_ascii=False, sort_keys=True
        ),
        plugin="\n".join("  " + line if line else "" for line in plugin.splitlines()),
    )
    entry = f"static/remoteEntry.{hashlib.sha256(code.encode()).hexdigest()[:20]}.js"
    package["jupyterlab"]["_build"] = {"load": entry, "extension": "./extension"}
    install = {
        "packageManager": "python",
        "packageName": "course",
        "uninstallInstructions": "Borra esta carpeta; «python -m course jupyter-es» la vuelve a poner",
    }
    return {
        "package.json": json.dumps(package, ensure_ascii=False, indent=2) + "\n",
        "install.json": json.dumps(install, ensure_ascii=False, indent=2) + "\n",
        entry: code,
    }


def build(output: Path = OUTPUT) -> None:
    if output.exists():
        shutil.rmtree(output)
    for relative, text in files().items():
        path = output / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    build(Path(sys.argv[1]) if len(sys.argv) > 1 else OUTPUT)
    print(f"extensión construida en {OUTPUT if len(sys.argv) < 2 else sys.argv[1]}")
