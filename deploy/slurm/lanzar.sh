#!/bin/bash
# Califica la clase en Slurm: un array de FRAGMENTOS tareas y la unión cuando terminen.
#   cd <carpeta del curso>      # en un sistema de archivos compartido por los nodos
#   VENV=$PWD/.venv FRAGMENTOS=8 deploy/slurm/lanzar.sh [opciones de grade: --lab, --zip…]
# Las opciones van a cada tarea y a la unión (los mismos --zip). Imprime los dos trabajos.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
: "${VENV:?falta VENV: el entorno virtual del curso}"
export VENV FRAGMENTOS="${FRAGMENTOS:-8}"
mkdir -p logs
array=$(sbatch --parsable --export=ALL --array="1-$FRAGMENTOS" "$here/fragmento.sbatch" "$@")
merge=$(sbatch --parsable --export=ALL --dependency="afterany:$array" "$here/unir.sbatch" "$@")
echo "array $array; unión $merge"
