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

  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (form.id === "answer-form" || form.id === "undo-form" || form.id === "card-actions") {
      event.preventDefault();
      send(form, event.submitter);
    }
  });

  document.addEventListener("keydown", function (event) {
    if (!study() || event.altKey || event.metaKey) { return; }
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
    var actions = document.getElementById("card-actions");
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
    var control = target && (target.tagName === "A" || target.tagName === "BUTTON") && target.id !== "reveal";
    if (front && !control && (event.key === " " || event.key === "Enter")) {
      event.preventDefault();
      reveal();
      return;
    }
    if (!front && answer && /^[1-4]$/.test(event.key)) {
      event.preventDefault();
      var button = document.querySelector('#answer-form button[data-key="' + event.key + '"]');
      if (button) { send(button.form, button); }
    }
  });

  document.addEventListener("DOMContentLoaded", function () { enhanceForms(document); });
})();
