// Generado por extension/build.py a partir de extension/src/plugin.js y
// extension/textos_es.json: no lo edites a mano.
var _JUPYTERLAB;
(_JUPYTERLAB = typeof _JUPYTERLAB === "undefined" ? {} : _JUPYTERLAB)["@curso-transformer/interfaz-es"] = (function () {
  "use strict";
  const TEXTS = {
  "(feedback available to fetch)": "(devolución lista para descargar)",
  "(view feedback)": "(ver la devolución)",
  "Advanced Tools": "Herramientas avanzadas",
  "Assignment List": "Lista de tareas",
  "Assignment not submitted:": "Tarea no entregada:",
  "Assignments": "Tareas",
  "At least one cell has an invalid nbgrader ID. Cell IDs must contain at least one character, and may only contain letters, numbers, hyphens, and/or underscores.": "Al menos una celda tiene un id. de nbgrader no válido. Los id. de celda deben tener al menos un carácter y solo pueden contener letras, números, guiones y guiones bajos.",
  "Autograded answer": "Respuesta autocalificada",
  "Autograded tests": "Pruebas autocalificadas",
  "Available formgraders": "Formgraders disponibles",
  "Cannot save notebook": "No se puede guardar el cuaderno",
  "Common Tools": "Herramientas comunes",
  "Course List": "Lista de cursos",
  "Courses": "Cursos",
  "Create Assignment": "Crear tarea",
  "Create assignment": "Crear tarea",
  "Disable Debugger": "Desactivar el depurador",
  "Downloaded assignments": "Tareas descargadas",
  "Duplicate nbgrader cell ID": "Id. de celda de nbgrader repetido",
  "Enable Debugger": "Activar el depurador",
  "Error fetching assignment.": "Error al descargar la tarea.",
  "Error fetching courses!": "¡Error al cargar los cursos!",
  "Error fetching feedback.": "Error al descargar la devolución.",
  "Error submitting assignment.": "Error al entregar la tarea.",
  "Error validating assignment.": "Error al validar la tarea.",
  "Fetch": "Descargar",
  "Fetch Feedback": "Descargar la devolución",
  "Fetching Feedback...": "Descargando la devolución…",
  "Fetching...": "Descargando…",
  "Formgrader": "Formgrader (calificar)",
  "Formgrader (local)": "Formgrader (calificar, local)",
  "ID:": "Id.:",
  "IPython Reference": "Referencia de IPython",
  "Invalid Submission": "Entrega no válida",
  "Invalid nbgrader cell ID": "Id. de celda de nbgrader no válido",
  "Loading, please wait...": "Cargando, espera…",
  "Manually graded answer": "Respuesta calificada a mano",
  "Manually graded task": "Tarea calificada a mano",
  "Markdown Reference": "Referencia de Markdown",
  "Matplotlib Reference": "Referencia de Matplotlib",
  "Mover el elemento down": "Bajar el elemento",
  "Mover el elemento up": "Subir el elemento",
  "Nbgrader Create Assignment": "Crear tarea de nbgrader",
  "No courses found.": "No se encontró ningún curso.",
  "NumPy Reference": "Referencia de NumPy",
  "Outdated schema version": "Versión de metadatos anticuada",
  "Please see the documentation on": "Consulta cómo configurarla en la documentación:",
  "Points:": "Puntos:",
  "Python Reference": "Referencia de Python",
  "Read-only": "Solo lectura",
  "Refresh assignments list": "Actualizar la lista de tareas",
  "Refresh formgrader list": "Actualizar la lista de Formgraders",
  "Released assignments": "Tareas publicadas",
  "Released, downloaded, and submitted assignments for course:": "Tareas publicadas, descargadas y entregadas del curso:",
  "SciPy Reference": "Referencia de SciPy",
  "Select a kernel that supports debugging to enable debugger": "Elige un núcleo que admita depuración para activar el depurador",
  "Student changes will be overwritten": "Los cambios del estudiante se sobrescribirán",
  "Submit": "Entregar",
  "Submitted assignments": "Tareas entregadas",
  "Success! Your notebook passes all the tests.": "¡Bien! Tu cuaderno supera todas las pruebas.",
  "SymPy Reference": "Referencia de SymPy",
  "The exchange directory does not exist and could": "No existe la carpeta de intercambio y no se pudo crear.",
  "The exchange directory does not exist and could not be created. The \"release\" and \"collect\" functionality will not be available. Please see the documentation on http://nbgrader.readthedocs.io/en/stable/user_guide/managing_assignment_files.html#setting-up-the-exchange for instructions.": "No existe la carpeta de intercambio y no se pudo crear. Publicar y recoger tareas no funcionará. Consulta cómo configurarla en la documentación: http://nbgrader.readthedocs.io/en/stable/user_guide/managing_assignment_files.html#setting-up-the-exchange",
  "The following cell failed:": "Esta celda falló:",
  "The following cell passed:": "Esta celda pasó:",
  "The source of the following cell has changed, but it should not have!": "El código de esta celda ha cambiado, y no debería.",
  "There are no assignments to fetch.": "No hay tareas que descargar.",
  "There are no available formgrader services.": "No hay ningún servicio de Formgrader disponible.",
  "There are no downloaded assignments.": "No hay tareas descargadas.",
  "There are no submitted assignments.": "No hay tareas entregadas.",
  "There was an error running the validate command:": "Hubo un error al ejecutar la validación:",
  "Toggle Dropdown": "Abrir o cerrar la lista",
  "Total points:": "Puntos totales:",
  "Type:": "Tipo:",
  "Validate": "Validar",
  "Validate Assignment": "Validar la tarea",
  "Validating...": "Validando…",
  "Validation Results": "Resultado de la validación",
  "Validation failed": "La validación falló",
  "Version Mismatch": "Versiones distintas",
  "for instructions.": "(en inglés).",
  "not be created. The \"release\" and \"collect\" functionality will not be available.": "Publicar y recoger tareas no funcionará.",
  "pandas Reference": "Referencia de pandas",
  "submitting...": "entregando…"
};
  const PREFIXES = {"Cannot check version: ": "No se puede comprobar la versión: ", "Cannot validate: ": "No se puede validar: "};
  const FILE_TYPES = {"Notebook": "Cuaderno"};
  const OUTPUTS = {"You did not provide a response.": "No has escrito ninguna respuesta."};
  const ENDINGS = {"Último punto de control: None": "Último punto de control: ninguno"};
  const SETTINGS = {"Allow local nbgrader config file": "Permitir un archivo de configuración de nbgrader local", "Always": "Siempre", "Always show": "Mostrar siempre", "Any selected": "Si hay alguna seleccionada", "Ask (None)": "Preguntar (ninguno)", "Automatically save Jupyter widget state when a notebook is saved.": "Guardar el estado de los componentes interactivos al guardar el cuaderno.", "Background color to use in dark theme": "Color de fondo con el tema oscuro", "Background color to use in light theme": "Color de fondo con el tema claro", "Bottom": "Abajo", "Code": "Código", "Command": "Orden", "Content visibility": "Visibilidad del contenido", "Critical": "Crítico", "Dark": "Oscuro", "Debug": "Depuración", "Default": "Por omisión", "Defer": "Diferido", "Delete": "Supr", "Disabled": "Desactivado", "Display": "Mostrar", "Don't show": "No mostrar", "Down": "Abajo", "End": "Fin", "Escape": "Esc", "Full": "Completo", "Home": "Inicio", "Info": "Información", "Inherit": "Heredado", "Jupyter Widgets": "Componentes interactivos de Jupyter", "Jupyter widgets settings.": "Configuración de los componentes interactivos de Jupyter.", "Left": "Izquierda", "Light": "Claro", "Main": "Principal", "Messages": "Mensajes", "Minimum breadcrumbs left items": "Mínimo de carpetas a la izquierda en la ruta", "Minimum breadcrumbs right items": "Mínimo de carpetas a la derecha en la ruta", "Minimum number of directory items to display on the left side of the breadcrumbs ellipsis": "Número mínimo de carpetas que se muestran a la izquierda de los puntos suspensivos de la ruta", "Minimum number of directory items to display on the right side of the breadcrumbs ellipsis": "Número mínimo de carpetas que se muestran a la derecha de los puntos suspensivos de la ruta", "Multiple": "Varios documentos", "Multiple selected": "Si hay varias seleccionadas", "Never": "Nunca", "None": "Ninguno", "Off": "Desactivado", "On": "Activado", "On hover": "Al pasar el ratón", "One subshell per comm": "Un subshell por comm", "One subshell per comm-target": "Un subshell por destino de comm", "Option of the formgrader extension.": "Opciones de la extensión Formgrader.", "Plugin": "Complemento", "Raw": "Sin formato", "Right": "Derecha", "Save Jupyter widget state in notebooks": "Guardar el estado de los componentes interactivos en los cuadernos", "Scale": "Escalar", "Session": "Sesión", "Show if one or more": "Mostrar si hay uno o más", "Side": "Lateral", "Side by side": "Lado a lado", "Single": "Un documento", "Spacer": "Espaciador", "Split bottom": "Dividir abajo", "Split left": "Dividir a la izquierda", "Split right": "Dividir a la derecha", "Split top": "Dividir arriba", "Tab after": "Pestaña después", "Tab before": "Pestaña antes", "This setting allows the use of a local config file for formgrader.\nWARNING: using the local configuration file has consequences for the server, it should not be used if several users are using the same instance of Jupyterlab.": "Formgrader puede leer un archivo de configuración local.\nCUIDADO: afecta a todo el servidor; no lo actives si varias personas comparten el mismo JupyterLab.", "Top": "Arriba", "UI": "Interfaz", "Verbose": "Detallado", "Warning": "Aviso"};
  const SETTINGS_PREFIXES = {"Jupyter widgets settings.": "Configuración de los componentes interactivos de Jupyter.", "Option of the formgrader extension.": "Opciones de la extensión Formgrader."};
  // La interfaz en español donde el paquete de idioma no llega.
  //
  // - nbgrader 0.9.6 escribe sus textos en inglés directamente en la página: no usa el
  //   traductor de JupyterLab.
  // - JupyterLab 4.6 crea el botón del depurador con el traductor nulo, no traduce las
  //   secciones del inspector de propiedades y nombra «Notebook» al tipo de archivo.
  // - Los enlaces de ayuda del núcleo (menú Ayuda) vienen en inglés de ipykernel.
  //
  // El complemento observa la página y cambia, solo dentro de esas zonas (REGIONS), cada
  // texto, título o marcador que coincide entero con uno de TEXTS (o empieza por uno de
  // PREFIXES); y renombra los tipos de archivo de FILE_TYPES. No toca el código de nadie: si
  // una versión nueva cambia un texto, ese texto se queda en inglés y la prueba del
  // navegador lo señala. Dentro de los resultados de Validar (texto preformateado, donde
  // también van las trazas de error del estudiante) solo cambia los mensajes enteros de
  // OUTPUTS. TEXTS, PREFIXES, ENDINGS, OUTPUTS y FILE_TYPES vienen de ../textos_es.json (los pone
  // build.py).

  const REGIONS = [
    "[id^='nbgrader']",
    "[class*='nbgrader']",
    ".validate-button",
    "[data-command^='nbgrader:']",
    "[data-id^='nbgrader']",
    "[data-id='formgrader']",
    ".jp-Dialog",
    ".jp-DebuggerBugButton",
    ".jp-NotebookTools",
    ".lm-Menu-item[data-command^='help-menu-']",
  ].join(", ");
  // El editor de configuración: las opciones de las listas y los títulos de los esquemas que
  // el servidor no traduce (propiedades anidadas, extensiones sin paquete de idioma) solo se
  // cambian aquí, con SETTINGS y SETTINGS_PREFIXES.
  const SETTINGS_REGIONS = ".jp-SettingsPanel, .jp-PluginList";
  const ALL_REGIONS = `${REGIONS}, ${SETTINGS_REGIONS}`;
  const SKIP = "pre, code, .jp-InputArea, .jp-OutputArea, .cm-editor";
  const ATTRIBUTES = ["title", "placeholder", "aria-label"];

  function spanish(text, settings = false) {
    const trimmed = text.trim();
    if (!trimmed) {
      return null;
    }
    const found =
      TEXTS[trimmed] ?? TEXTS[trimmed.replace(/\s+/g, " ")] ?? (settings ? SETTINGS[trimmed] : undefined);
    if (found !== undefined) {
      return text.replace(trimmed, found);
    }
    const prefixes = settings ? { ...PREFIXES, ...SETTINGS_PREFIXES } : PREFIXES;
    for (const [english, translated] of Object.entries(prefixes)) {
      if (trimmed.startsWith(english)) {
        return text.replace(english, translated);
      }
    }
    return null;
  }

  function inRegion(element) {
    return element !== null && element.closest(ALL_REGIONS) !== null && element.closest(SKIP) === null;
  }

  function inSettings(element) {
    return element.closest(SETTINGS_REGIONS) !== null;
  }

  function translateText(node) {
    const parent = node.parentElement;
    if (parent !== null && parent.closest(".jp-Dialog pre") !== null) {
      const message = OUTPUTS[node.data.trim()];
      if (message !== undefined && message !== node.data) {
        node.data = message;
      }
      return;
    }
    if (!inRegion(parent)) {
      return;
    }
    const translated = spanish(node.data, inSettings(parent));
    if (translated !== null && translated !== node.data) {  // si no, otra mutación: sin fin
      node.data = translated;
    }
  }

  // Un final fijo dentro de un título que JupyterLab compone (la pestaña de un cuaderno sin
  // punto de control termina en «Último punto de control: None»).
  function translateEnding(element) {
    const value = element.getAttribute("title");
    for (const [english, translated] of Object.entries(value === null ? {} : ENDINGS)) {
      if (value.endsWith(english)) {
        element.setAttribute("title", value.slice(0, -english.length) + translated);
      }
    }
  }

  function translateAttributes(element) {
    translateEnding(element);
    if (!inRegion(element)) {
      return;
    }
    for (const name of ATTRIBUTES) {
      const value = element.getAttribute(name);
      const translated = value === null ? null : spanish(value, inSettings(element));
      if (translated !== null && translated !== value) {
        element.setAttribute(name, translated);
      }
    }
  }

  function translateTree(root) {
    if (root.nodeType === Node.TEXT_NODE) {
      translateText(root);
      return;
    }
    if (root.nodeType !== Node.ELEMENT_NODE) {
      return;
    }
    if (root.closest(ALL_REGIONS) === null && root.querySelector(ALL_REGIONS) === null) {
      return;
    }
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_ELEMENT | NodeFilter.SHOW_TEXT);
    for (let node = root; node !== null; node = walker.nextNode()) {
      if (node.nodeType === Node.TEXT_NODE) {
        translateText(node);
      } else {
        translateAttributes(node);
      }
    }
  }

  function observe(mutations) {
    for (const mutation of mutations) {
      if (mutation.type === "characterData") {
        translateText(mutation.target);
      } else if (mutation.type === "attributes") {
        translateAttributes(mutation.target);
      } else {
        mutation.addedNodes.forEach(translateTree);
      }
    }
  }

  function renameFileTypes(registry) {
    for (const fileType of registry.fileTypes()) {
      const translated = FILE_TYPES[fileType.displayName];
      if (translated !== undefined) {
        fileType.displayName = translated;
      }
    }
  }

  // nbgrader pone títulos en inglés a sus paneles («Assignments»): la pestaña, el menú
  // Pestañas y el botón de cerrar salen de ese título.
  function renameTitles(shell) {
    for (const widget of shell.widgets("main")) {
      const translated = TEXTS[widget.title.label];
      if (translated !== undefined && widget.id.startsWith("nbgrader")) {
        widget.title.label = translated;
      }
    }
  }

  const plugin = {
    id: "@curso-transformer/interfaz-es:plugin",
    description: "La interfaz en español donde el paquete de idioma no llega.",
    autoStart: true,
    activate: (app) => {
      app.restored.then(() => {
        renameFileTypes(app.docRegistry);
        renameTitles(app.shell);
        app.shell.layoutModified.connect(() => renameTitles(app.shell));
      });
      new MutationObserver(observe).observe(document.body, {
        childList: true,
        subtree: true,
        characterData: true,
        attributes: true,
        attributeFilter: ATTRIBUTES,
      });
      translateTree(document.body);
    },
  };
  return {
    init: function () { return Promise.resolve(); },
    get: function (module) {
      if (module !== "./extension") {
        return Promise.reject(new Error("módulo desconocido: " + module));
      }
      return Promise.resolve(function () { return { __esModule: true, default: plugin }; });
    },
  };
})();
