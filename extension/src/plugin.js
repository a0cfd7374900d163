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
