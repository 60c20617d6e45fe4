// The labelling page: one execution at a time; y / n label it, s skips, j / k move.
// Each label is posted as JSON to /api/labels; the progress and the calibrated figures are
// then read again from /api/runs/{run}/labels/{check}?limit=0. Everything shown from the
// server is set as text (textContent), never as markup.
"use strict";
document.addEventListener("DOMContentLoaded", function () {
  var status = document.getElementById("label-status");
  var items = Array.prototype.slice.call(document.querySelectorAll("article.label-item"));
  if (!status) {
    return;
  }
  var run = status.dataset.run;
  var check = status.dataset.check;
  var reviewer = document.getElementById("reviewer");
  var note = document.getElementById("note");
  var message = document.getElementById("label-message");
  var KEY = "checkweigh.reviewer";
  var at = 0;
  var busy = false;

  try {
    reviewer.value = window.localStorage.getItem(KEY) || "";
  } catch (e) {
    reviewer.value = ""; // storage refused (a private window): the field still works
  }
  reviewer.addEventListener("input", function () {
    try {
      window.localStorage.setItem(KEY, reviewer.value);
    } catch (e) {
      // not kept: sent with each label all the same
    }
  });

  function text(id, value) {
    var el = document.getElementById(id);
    if (el) {
      el.textContent = value;
    }
  }

  function pct(value) {
    return value === null || value === undefined ? "—" : (100 * value).toFixed(1) + "%";
  }

  function say(words, bad) {
    message.textContent = words;
    message.className = bad ? "error" : "muted";
  }

  function show(i) {
    if (items.length === 0) {
      return;
    }
    at = Math.max(0, Math.min(items.length - 1, i));
    items.forEach(function (item, j) {
      item.hidden = j !== at;
    });
    text("item-at", String(at + 1));
  }

  function next() {
    if (at === items.length - 1) {
      say("the last one on this page: reload it for the next ones", false);
    }
    show(at + 1);
  }

  function refresh() {
    var query = "?limit=0&order=" + encodeURIComponent(status.dataset.order);
    if (status.dataset.budget) {
      query += "&budget=" + encodeURIComponent(status.dataset.budget);
    }
    var url =
      "/api/runs/" + encodeURIComponent(run) + "/labels/" + encodeURIComponent(check) + query;
    return fetch(url, { credentials: "same-origin" })
      .then(function (response) {
        return response.ok ? response.json() : null;
      })
      .then(function (q) {
        if (!q) {
          return;
        }
        var p = q.progress;
        text("progress-labelled", String(p.labelled));
        text("progress-decided", String(p.decided));
        text("progress-budget", String(p.budget));
        var bar = document.getElementById("progress-bar");
        bar.max = p.budget;
        bar.value = Math.min(p.labelled, p.budget);
        var cal = q.calibration;
        text("rate-calibrated", pct(cal ? cal.calibrated_pass_rate : null));
        text(
          "rate-interval",
          cal && cal.calibrated_low !== null
            ? pct(cal.calibrated_low) + " to " + pct(cal.calibrated_high)
            : "—"
        );
        text("sensitivity", pct(cal ? cal.sensitivity : null));
        text("specificity", pct(cal ? cal.specificity : null));
        text(
          "more-labels",
          q.more_labels === null
            ? ""
            : q.more_labels + " more label(s) would bring the calibrated interval to ±5 points"
        );
        var trust = document.getElementById("trust");
        if (q.trust) {
          trust.dataset.status = q.trust.status;
          trust.textContent =
            "trust " + q.trust.status +
            (q.trust.kappa !== null ? " · judge's κ with people " + q.trust.kappa.toFixed(2) : "") +
            (q.trust.needs ? " · needs " + q.trust.needs : "");
        }
        var notes = document.getElementById("label-notes");
        notes.textContent = "";
        q.notes.forEach(function (words) {
          var li = document.createElement("li");
          li.className = "warning";
          li.textContent = words;
          notes.appendChild(li);
        });
        var kappa = document.getElementById("reviewers-kappa");
        kappa.dataset.overlap = String(q.overlap);
        if (q.reviewer_kappa !== null) {
          kappa.textContent =
            "reviewers' κ " + q.reviewer_kappa.toFixed(2) + " over " + q.overlap +
            " execution(s) two labelled";
        } else if (q.overlap) {
          kappa.textContent =
            "reviewers' κ undefined over " + q.overlap + " execution(s) two labelled";
        }
      });
  }

  function mark(item, value, who) {
    var list = item.querySelector("ul.item-labels");
    var mine = null;
    list.querySelectorAll("li").forEach(function (li) {
      if (li.dataset.reviewer === who) {
        mine = li;
      }
    });
    if (!mine) {
      mine = document.createElement("li");
      list.appendChild(mine);
    }
    mine.dataset.reviewer = who;
    mine.dataset.label = value ? "yes" : "no";
    mine.textContent = (who || "someone") + " said " + (value ? "yes" : "no") + " (just now)";
    item.dataset.labelled = value ? "yes" : "no";
  }

  function label(value) {
    var item = items[at];
    if (!item || busy) {
      return;
    }
    busy = true;
    var who = reviewer.value.trim();
    var body = {
      run: run,
      check: check,
      case: item.dataset.caseId,
      repeat: Number(item.dataset.repeat),
      label: value,
      note: note.value,
      reviewer: who,
      source: "ui",
    };
    fetch("/api/labels", {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body),
    })
      .then(function (response) {
        return response.json().then(function (answer) {
          if (response.status !== 201) {
            throw new Error(answer && answer.error ? answer.error : "HTTP " + response.status);
          }
          mark(item, value, who);
          note.value = "";
          var said = "labelled " + item.dataset.caseId + ": " + (value ? "yes" : "no");
          if (at === items.length - 1) {
            said += "; that was the last one on this page: reload it for the next ones";
          }
          say(said, false);
          show(at + 1);
          return refresh();
        });
      })
      .catch(function (error) {
        say("not stored: " + error.message, true);
      })
      .then(function () {
        busy = false;
      });
  }

  var actions = {
    y: function () {
      label(true);
    },
    n: function () {
      label(false);
    },
    s: function () {
      say("skipped " + (items[at] ? items[at].dataset.caseId : ""), false);
      next();
    },
    j: function () {
      next();
    },
    k: function () {
      show(at - 1);
    },
  };

  document.querySelectorAll(".label-actions button").forEach(function (button) {
    button.addEventListener("click", function () {
      actions[button.dataset.key]();
    });
  });

  document.addEventListener("keydown", function (event) {
    var target = event.target;
    var typing = target && (target.tagName === "INPUT" || target.tagName === "TEXTAREA" ||
      target.tagName === "SELECT");
    if (typing) {
      if (event.key === "Escape") {
        target.blur();
      }
      return;
    }
    if (event.ctrlKey || event.metaKey || event.altKey) {
      return;
    }
    var act = actions[event.key];
    if (act) {
      event.preventDefault();
      act();
    }
  });

  show(0);
});
