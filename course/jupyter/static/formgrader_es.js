// Formgrader en español en el navegador: lo que su JavaScript escribe en la página.
//
// Las plantillas de Formgrader ya llegan traducidas del servidor (formgrader.py), pero sus
// tablas, diálogos, avisos y la página de calificación manual los rellena el JavaScript de
// nbgrader en inglés. Este script observa la página y cambia cada texto, título o marcador
// que coincide entero con uno de DATA.texts o con uno de DATA.patterns. No entra en el
// cuaderno del estudiante (SKIP): su texto se muestra tal cual. Lo sirve
// formgrader.py (con DATA sacado de formgrader_es.json y formgrader_pagina_es.json), desde
// una URL del propio servidor: no es un script en línea.
(function () {
  "use strict";
  const DATA = __DATA__;
  const CONTENT = ".rendered_html, .input_area, .output_wrapper";  // el cuaderno del estudiante
  const SKIP = `${CONTENT}, pre, code, textarea, script, style`;
  const ATTRIBUTES = ["title", "placeholder", "data-original-title", "aria-label", "value"];
  const PATTERNS = DATA.patterns.map(([english, spanish]) => [new RegExp(`^${english}$`), spanish]);

  function spanish(text) {
    const trimmed = text.replace(/\s+/g, " ").trim();
    if (!trimmed) {
      return null;
    }
    let found = DATA.texts[trimmed];
    for (const [pattern, translated] of PATTERNS) {
      if (found === undefined && pattern.test(trimmed)) {
        found = trimmed.replace(pattern, translated);
      }
    }
    if (found === undefined) {
      return null;
    }
    const edges = text.match(/^(\s*)[\s\S]*?(\s*)$/);
    return edges[1] + found + edges[2];
  }

  function allowed(element) {
    return element !== null && element.closest(SKIP) === null;
  }

  function translateText(node) {
    const translated = allowed(node.parentElement) ? spanish(node.data) : null;
    if (translated !== null && translated !== node.data) {
      node.data = translated;
    }
  }

  function translateAttributes(element) {
    for (const name of ATTRIBUTES) {
      const value = element.getAttribute(name);
      if (value === null || (name === "value" && element.type !== "button")) {
        continue;
      }
      const translated = element.closest(CONTENT) === null ? spanish(value) : null;
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

  // Las cabeceras en español son más largas: en la tabla de tareas, la última columna
  // («Publicar devolución») quedaba cortada. Cabeceras algo más pequeñas y menos relleno;
  // si aun así no cabe, la tabla se desplaza dentro de su recuadro.
  function compactTables() {
    const style = document.createElement("style");
    style.textContent =
      ".dataTables_wrapper { overflow-x: auto; }" +
      " table.dataTable > thead > tr > th, table.dataTable > tbody > tr > td" +
      " { padding-left: 4px !important; }" +
      " table.dataTable > thead > tr > th.sorting_disabled, table.dataTable > tbody > tr > td" +
      " { padding-right: 4px !important; }" +
      " table.dataTable > thead > tr > th { font-size: 12px; }";
    document.head.appendChild(style);
  }

  function start() {
    document.documentElement.lang = "es";
    compactTables();
    translateTree(document.documentElement);
    new MutationObserver(observe).observe(document.documentElement, {
      childList: true,
      subtree: true,
      characterData: true,
      attributes: true,
      attributeFilter: ATTRIBUTES,
    });
  }

  start();
})();
