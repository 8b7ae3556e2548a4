// Progressive enhancement only: every page works without this file.
(function () {
  "use strict";

  function enhanceForms(root) {
    root.querySelectorAll("[data-browser-timezone]").forEach(function (input) {
      try {
        var tz = Intl.DateTimeFormat().resolvedOptions().timeZone;
        if (tz) { input.value = tz; }
      } catch (e) { /* keep UTC */ }
    });
    root.querySelectorAll("button[data-copy]").forEach(function (button) {
      var source = document.getElementById(button.getAttribute("data-copy"));
      if (!source || !navigator.clipboard) { return; }
      button.hidden = false;
      button.addEventListener("click", function () {
        navigator.clipboard.writeText(source.textContent.trim()).then(function () {
          button.textContent = button.getAttribute("data-copied") || button.textContent;
        });
      });
    });
    // A secret shown once answers a POST; were the page reloaded, the browser would post
    // again and make a second one. Its address becomes the page's own, so a reload is a GET.
    root.querySelectorAll("[data-replace-url]").forEach(function (shown) {
      history.replaceState(null, "", shown.getAttribute("data-replace-url"));
    });
    // An invitation link carries its token after "#", which never reaches the server (nor
    // its logs): posted from here, and taken out of the address bar and history. A link
    // opened while a join page is showing changes only the fragment, hence hashchange.
    // A language picked from the open list (mouse or touch) applies at once. Arrow keys on
    // the closed list change its value without leaving the page (WCAG 3.2.2): the Change
    // button, hidden until then, or Enter applies it. Without this script the button is shown.
    root.querySelectorAll("form[data-language]").forEach(function (form) {
      var select = form.querySelector("select");
      var button = form.querySelector("button[type=submit]");
      if (!select || !button) { return; }
      var pointer = false;
      button.hidden = true;
      select.addEventListener("pointerdown", function () { pointer = true; });
      select.addEventListener("keydown", function (event) {
        pointer = false;
        if (event.key === "Enter") { event.preventDefault(); form.requestSubmit(); }
      });
      select.addEventListener("change", function () {
        if (pointer) { form.requestSubmit(); } else { button.hidden = false; }
      });
    });
    markScrollBoxes(root);
    root.querySelectorAll("form[data-invitation]").forEach(function (form) {
      function openLink() {
        var token = window.location.hash.slice(1);
        if (!token) { return; }
        history.replaceState(null, "", window.location.pathname + window.location.search);
        form.elements.invitation.value = token;
        form.requestSubmit();
      }
      window.addEventListener("hashchange", openLink);
      openLink();
    });
    // A password reset link carries its token after "#" too: it goes into the form (not
    // submitted: the new password is still to be typed), and out of the address bar.
    root.querySelectorAll("form[data-reset-link]").forEach(function (form) {
      function takeLink() {
        var token = window.location.hash.slice(1);
        if (!token) { return; }
        history.replaceState(null, "", window.location.pathname + window.location.search);
        var field = form.elements.link;
        field.value = token;
        field.hidden = true;
        var label = form.querySelector("label[for='" + field.id + "']");
        if (label) { label.hidden = true; }
      }
      window.addEventListener("hashchange", takeLink);
      takeLink();
    });
  }

  // A table wider than its box scrolls inside the box; such a box becomes a named tab stop,
  // so that it scrolls from the keyboard too. Boxes that fit stay out of the tab order.
  function markScrollBoxes(root) {
    root.querySelectorAll(".scroll").forEach(function (box) {
      if (box.scrollWidth <= box.clientWidth + 1) {
        if (box.getAttribute("data-scrolls")) {
          box.removeAttribute("tabindex"); box.removeAttribute("role"); box.removeAttribute("data-scrolls");
        }
        return;
      }
      if (box.hasAttribute("tabindex")) { return; }
      var named = box.querySelector("caption") || box.closest("section") && box.closest("section").querySelector("h2");
      box.setAttribute("tabindex", "0");
      box.setAttribute("role", "region");
      box.setAttribute("data-scrolls", "1");
      if (named && named.textContent.trim()) { box.setAttribute("aria-label", named.textContent.trim()); }
    });
  }

  // A deck's subdecks stay folded as the person left them, in this browser, as Anki's deck
  // list keeps a collapsed deck collapsed. Storage may be refused (private modes): then
  // every fold opens as the page has it.
  function rememberFolds(root) {
    root.querySelectorAll("details[data-fold]").forEach(function (fold) {
      var key = "flashcards.fold:" + fold.getAttribute("data-fold");
      try { if (localStorage.getItem(key) === "closed") { fold.open = false; } } catch (e) { return; }
      fold.addEventListener("toggle", function () {
        try {
          if (fold.open) { localStorage.removeItem(key); } else { localStorage.setItem(key, "closed"); }
        } catch (e) { /* not kept: nothing else depends on it */ }
      });
    });
  }

  // Browsers without ::details-content cannot show a closed menu's links on a wide screen
  // from the stylesheet alone: open it there.
  function openWideMenu() {
    var menu = document.querySelector("details.menu");
    if (!menu || (window.CSS && CSS.supports("selector(::details-content)"))) { return; }
    if (window.matchMedia("(min-width: 52rem)").matches) { menu.open = true; }
  }

  var busy = false;

  function study() { return document.querySelector("[data-study]"); }
  function live() { return document.getElementById("live"); }

  function reveal() {
    var section = study();
    var answer = document.getElementById("answer");
    var form = document.getElementById("answer-form");
    if (!section || !answer || !form || !answer.hidden) { return; }
    answer.hidden = false;
    form.hidden = false;
    section.querySelector(".reveal").hidden = true;
    section.classList.remove("front");
    section.classList.add("revealed");
    var edit = document.getElementById("edit-card");
    if (edit && edit.getAttribute("data-answer-href")) {
      edit.href = edit.getAttribute("data-answer-href");
    }
    // The answer is read out first; the buttons follow in tab order.
    answer.focus();
  }

  // Sends a study form with fetch() and swaps in the next card from the page the server
  // redirects to, so there is no full reload; the form still works without it.
  function send(form, submitter) {
    if (busy) { return; }
    busy = true;
    var data = new FormData(form);
    if (submitter && submitter.name) { data.append(submitter.name, submitter.value); }
    var section = study();
    if (section) { section.classList.add("busy"); }
    fetch(form.action, {
      method: "POST",
      body: data,
      credentials: "same-origin",
      headers: { "X-CSRF-Token": data.get("csrf_token") || "" }
    }).then(function (response) {
      if (!response.ok) { throw new Error(String(response.status)); }
      return response.text();
    }).then(function (html) {
      var doc = new DOMParser().parseFromString(html, "text/html");
      var next = doc.querySelector("[data-study]");
      var current = study();
      if (!next || !current) { window.location.reload(); return; }
      current.replaceWith(document.importNode(next, true));
      var messages = doc.getElementById("live");
      if (messages && live()) { live().innerHTML = messages.innerHTML; }
      var question = document.getElementById("question");
      if (question) { question.focus(); }
    }).catch(function () {
      // Fall back to a plain submission; form.submit() would drop the pressed button's value.
      if (submitter && submitter.name) {
        var input = document.createElement("input");
        input.type = "hidden";
        input.name = submitter.name;
        input.value = submitter.value;
        form.appendChild(input);
      }
      form.submit();
    }).finally(function () {
      busy = false;
    });
  }

  document.addEventListener("click", function (event) {
    var link = event.target.closest && event.target.closest("#reveal");
    if (link) { event.preventDefault(); reveal(); }
  });

  // A choice that rules out the same value among checkboxes (a deck's language is no
  // translation of itself): that box is unchecked and disabled, the others enabled.
  document.addEventListener("change", function (event) {
    var select = event.target;
    var name = select.getAttribute && select.getAttribute("data-excludes");
    if (!name || !select.form) { return; }
    select.form.querySelectorAll('input[name="' + name + '"]').forEach(function (box) {
      box.disabled = box.value === select.value;
      if (box.disabled) { box.checked = false; }
    });
  });

  // A field whose value is not the one the page came with.
  function changed(form) {
    return Array.prototype.some.call(form.elements, function (field) {
      if (field.type === "hidden" || field.type === "file" || !("defaultValue" in field)) {
        return false;
      }
      if (field.type === "checkbox" || field.type === "radio") {
        return field.checked !== field.defaultChecked;
      }
      return field.value !== field.defaultValue;
    });
  }

  // A card's page has a form per language: saving one would drop what was typed in another.
  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (!form.hasAttribute || !form.hasAttribute("data-unsaved")) { return; }
    var others = Array.prototype.filter.call(
      document.querySelectorAll("form[data-unsaved]"),
      function (other) { return other !== form && changed(other); }
    );
    if (others.length && !window.confirm(form.getAttribute("data-unsaved"))) {
      event.preventDefault();
      others[0].querySelector("textarea, input:not([type=hidden])").focus();
    }
  });

  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (form.id === "answer-form" || form.id === "undo-form" || form.id === "card-actions") {
      event.preventDefault();
      send(form, event.submitter);
    }
  });

  document.addEventListener("keydown", function (event) {
    if (!study() || event.metaKey) { return; }
    var actions = document.getElementById("card-actions");
    // Anki's Forget (Reset) key, by physical key: Alt changes what N types on some layouts.
    var forget = actions && actions.querySelector('button[value="forget"]');
    if (forget && event.ctrlKey && event.altKey && event.code === "KeyN") {
      event.preventDefault();
      send(actions, forget);
      return;
    }
    if (event.altKey) { return; }
    var target = event.target;
    if (target && (target.tagName === "INPUT" || target.tagName === "SELECT" || target.tagName === "TEXTAREA")) {
      return;
    }
    var answer = document.getElementById("answer");
    var front = answer && answer.hidden;
    var undoForm = document.getElementById("undo-form");
    // By the physical key (event.code): with a Korean input method on, U types "ㅕ", and
    // Caps Lock or Shift turn "z" into "Z".
    if ((event.code === "KeyZ" && event.ctrlKey) || (event.code === "KeyU" && !event.ctrlKey)) {
      event.preventDefault();
      if (undoForm) { send(undoForm, null); }
      return;
    }
    // Anki's keys for the card shown. Ctrl+1..7 by physical key, as Shift or an input method
    // may change what the digit types; pressing a card's own flag again removes it.
    if (actions && event.ctrlKey && /^Digit[1-7]$/.test(event.code)) {
      event.preventDefault();
      var number = event.code.slice(5);
      actions.elements.flag.value = actions.getAttribute("data-flag") === number ? "0" : number;
      send(actions, actions.querySelector('button[value="flag"]'));
      return;
    }
    if (event.ctrlKey) { return; }
    if (actions && (event.key === "-" || event.key === "@")) {
      event.preventDefault();
      var value = event.key === "-" ? "bury" : "suspend";
      send(actions, actions.querySelector('button[value="' + value + '"]'));
      return;
    }
    var edit = document.getElementById("edit-card");
    if (edit && event.code === "KeyE" && !event.shiftKey) {
      event.preventDefault();
      window.location.href = edit.href;
      return;
    }
    // Space and Enter are a focused control's own keys: a link's, a button's, a player's.
    var control = target && target.closest && !!target.closest("a, button, audio, video, summary") &&
      target.id !== "reveal";
    if (front && !control && (event.key === " " || event.key === "Enter")) {
      event.preventDefault();
      reveal();
      return;
    }
    // Anki's default answer: Space or Enter again, once the answer shows, is Good. A held key
    // repeats: only a new press answers, so holding Space to reveal never answers too.
    var good = !control && (event.key === " " || event.key === "Enter");
    if (!front && answer && (good || /^[1-4]$/.test(event.key))) {
      event.preventDefault();
      if (event.repeat) { return; }
      var key = good ? "3" : event.key;
      var button = document.querySelector('#answer-form button[data-key="' + key + '"]');
      if (button) { send(button.form, button); }
    }
  });

  // A card's player clicked keeps the focus, and a browser's own player then takes the keys:
  // the study keys (1-4, Space) would do nothing. Once it plays, the focus goes back to the
  // page (the sound goes on); a player reached with the keyboard (focus-visible) keeps it,
  // for its own keys.
  document.addEventListener("play", function (event) {
    var player = event.target;
    if (player === document.activeElement && !player.matches(":focus-visible")) { player.blur(); }
  }, true);

  // Charts: the value of the bar or day pointed at or focused is written below the chart
  // (each also has a tooltip and a label), and the arrow keys move focus within a chart, so
  // that it is one stop in the tab order. A heatmap (data-week) moves by week sideways.
  function chartPoint(target) {
    return target && target.closest ? target.closest("[data-point]") : null;
  }

  function showValue(point) {
    var chart = point.closest(".chart");
    var readout = chart && chart.querySelector("[data-readout]");
    if (!readout) { return; }
    readout.textContent = point.getAttribute("aria-label");
    readout.hidden = false;
  }

  document.addEventListener("focusin", function (event) {
    var point = chartPoint(event.target);
    if (point) { showValue(point); }
  });

  document.addEventListener("mouseover", function (event) {
    var point = chartPoint(event.target);
    if (point) { showValue(point); }
  });

  document.addEventListener("keydown", function (event) {
    var point = chartPoint(event.target);
    if (!point || event.altKey || event.ctrlKey || event.metaKey) { return; }
    var points = Array.prototype.slice.call(point.closest("[data-points]").querySelectorAll("[data-point]"));
    var i = points.indexOf(point);
    var week = Number(point.closest("[data-points]").getAttribute("data-week")) || 0;
    var moves = {
      ArrowLeft: week ? -week : -1,
      ArrowRight: week ? week : 1,
      ArrowUp: week ? -1 : 0,
      ArrowDown: week ? 1 : 0,
      Home: -i,
      End: points.length - 1 - i
    };
    var step = moves[event.key];
    if (!step) { return; }
    event.preventDefault();
    var next = points[Math.max(0, Math.min(points.length - 1, i + step))];
    point.setAttribute("tabindex", "-1");
    next.setAttribute("tabindex", "0");
    next.focus();
  });

  // The card browser's box above its column of boxes ticks or clears every card on the page;
  // it shows only with script, which it needs, and tells when only some are ticked.
  function pickBoxes(form) {
    return form.querySelectorAll('input[type=checkbox][name="card_id"]');
  }
  function showPicked(form) {
    var all = form.querySelector("[data-select-all]");
    if (!all) { return; }
    var boxes = Array.prototype.slice.call(pickBoxes(form));
    var ticked = boxes.filter(function (box) { return box.checked; }).length;
    all.checked = ticked > 0 && ticked === boxes.length;
    all.indeterminate = ticked > 0 && ticked < boxes.length;
  }
  document.addEventListener("change", function (event) {
    var form = event.target.form;
    if (!form) { return; }
    if (event.target.hasAttribute("data-select-all")) {
      pickBoxes(form).forEach(function (box) { box.checked = event.target.checked; });
    } else if (event.target.name === "card_id") {
      showPicked(form);
    }
  });
  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("[data-select-all]").forEach(function (all) {
      all.hidden = false;
      showPicked(all.form);
    });
  });

  // Adding cards as in Anki's Add window: Ctrl+Enter (Cmd+Enter) adds from any field, and
  // after the page comes back the question field has the focus for the next card.
  document.addEventListener("keydown", function (event) {
    var form = event.target.form;
    if (event.key !== "Enter" || !(event.ctrlKey || event.metaKey) || event.repeat) { return; }
    if (event.isComposing || !form || !form.hasAttribute("data-add-card")) { return; }
    event.preventDefault();
    form.requestSubmit();
  });
  document.addEventListener("submit", function (event) {
    if (event.target.hasAttribute("data-add-card")) {
      try { window.sessionStorage.setItem("flashcards-adding", "1"); } catch (e) { /* private mode */ }
    }
  });
  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("[data-add-card] [data-needs-script]").forEach(function (hint) {
      hint.hidden = false;
    });
    var adding = null;
    try {
      adding = window.sessionStorage.getItem("flashcards-adding");
      window.sessionStorage.removeItem("flashcards-adding");
    } catch (e) { return; }
    var question = document.getElementById("new-question");
    if (adding && question) { question.focus(); }
  });

  // A form whose choice (the control data-mode-fields names: custom study's kind of
  // session, the browser's bulk action) decides which fields it reads shows only those
  // (data-modes); without script every field shows, and the others are ignored.
  function showModeFields(form) {
    var control = form.elements[form.getAttribute("data-mode-fields")];
    var mode = control ? control.value : "";
    form.querySelectorAll("[data-modes]").forEach(function (field) {
      field.hidden = !!mode && field.getAttribute("data-modes").split(" ").indexOf(mode) < 0;
    });
  }
  document.addEventListener("change", function (event) {
    var form = event.target.form;
    if (form && event.target.name === form.getAttribute("data-mode-fields")) {
      showModeFields(form);
    }
  });
  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("form[data-mode-fields]").forEach(showModeFields);
  });

  // A chart of days up to now too wide for the screen (the heatmap, reviews per day) scrolls
  // in its box: it opens on the latest days.
  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("[data-scroll-end]").forEach(function (box) {
      box.scrollLeft = box.scrollWidth;
    });
  });

  // Escape closes the phone menu and puts focus back on its button, as a menu button does.
  document.addEventListener("keydown", function (event) {
    if (event.key !== "Escape") { return; }
    var menu = document.querySelector("details.menu[open]");
    if (!menu || window.matchMedia("(min-width: 52rem)").matches) { return; }
    menu.open = false;
    menu.querySelector("summary").focus();
  });

  document.addEventListener("DOMContentLoaded", function () {
    enhanceForms(document); rememberFolds(document); openWideMenu();
  });
  window.addEventListener("resize", function () { markScrollBoxes(document); });
})();
