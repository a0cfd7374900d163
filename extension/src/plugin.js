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
// navegador lo señala. TEXTS, PREFIXES y FILE_TYPES vienen de ../textos_es.json (los pone
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
const SKIP = "pre, code, .jp-InputArea, .jp-OutputArea, .cm-editor";
const ATTRIBUTES = ["title", "placeholder", "aria-label"];

function spanish(text) {
  const trimmed = text.trim();
  if (!trimmed) {
    return null;
  }
  const found = TEXTS[trimmed];
  if (found !== undefined) {
    return text.replace(trimmed, found);
  }
  for (const [english, translated] of Object.entries(PREFIXES)) {
    if (trimmed.startsWith(english)) {
      return text.replace(english, translated);
    }
  }
  return null;
}

function inRegion(element) {
  return element !== null && element.closest(REGIONS) !== null && element.closest(SKIP) === null;
}

function translateText(node) {
  if (!inRegion(node.parentElement)) {
    return;
  }
  const translated = spanish(node.data);
  if (translated !== null) {
    node.data = translated;
  }
}

function translateAttributes(element) {
  if (!inRegion(element)) {
    return;
  }
  for (const name of ATTRIBUTES) {
    const value = element.getAttribute(name);
    const translated = value === null ? null : spanish(value);
    if (translated !== null) {
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
  if (root.closest(REGIONS) === null && root.querySelector(REGIONS) === null) {
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

const plugin = {
  id: "@curso-transformer/interfaz-es:plugin",
  description: "La interfaz en español donde el paquete de idioma no llega.",
  autoStart: true,
  activate: (app) => {
    app.restored.then(() => renameFileTypes(app.docRegistry));
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
