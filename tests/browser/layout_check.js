// Each table cell's words, each on one line: a word whose characters sit on two lines was
// broken inside it (a hyphen is where a compound may break, as in any text, and "::" where a
// deck's path may, between a parent deck and its subdeck). Then whatever
// is wider than the screen, unless a scroll box holds it.
(() => {
  const broken = [];
  for (const cell of document.querySelectorAll("td, th")) {
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const text = node.textContent;
      // A word, or a part of it up to a hyphen or "::" or from an opening bracket, where a line
      // may end.
      const re = /\(?(?:[^\s(:-]|:(?!:))+(?:-|::)?/g;
      let m;
      while ((m = re.exec(text))) {
        const range = document.createRange();
        range.setStart(node, m.index);
        range.setEnd(node, m.index + m[0].length);
        const tops = new Set([...range.getClientRects()].filter(r => r.width > 0).map(r => Math.round(r.top)));
        if (tops.size > 1) { broken.push(m[0]); }
      }
    }
  }
  const viewport = document.documentElement.clientWidth;
  const overflowing = [];
  for (const el of document.querySelectorAll("body *")) {
    const rect = el.getBoundingClientRect();
    if (el.ownerSVGElement || rect.width === 0 || rect.right <= viewport + 1 || !el.checkVisibility()) {
      continue;  // a drawing's parts: the drawing itself is measured
    }
    let box = el.parentElement, held = false;
    while (box && box !== document.body) {
      const style = getComputedStyle(box).overflowX;
      if (style === "auto" || style === "scroll" || style === "hidden") {
        held = box.getBoundingClientRect().right <= viewport + 1;
        break;
      }
      box = box.parentElement;
    }
    if (!held && !el.closest(".visually-hidden")) {
      overflowing.push(el.tagName + (el.className && typeof el.className === "string" ? "." + el.className : ""));
    }
  }
  return {broken, overflowing: overflowing.slice(0, 5),
          pageWidth: document.documentElement.scrollWidth, viewport};
})
