// Tidemark console: a file dropped on the upload form is uploaded at once (the form works
// without this, with its file field and button).
(function () {
  "use strict";
  var form = document.getElementById("upload");
  var input = document.getElementById("file");
  if (!form || !input) return;
  ["dragenter", "dragover"].forEach(function (type) {
    form.addEventListener(type, function (event) {
      event.preventDefault();
      form.classList.add("dragging");
    });
  });
  ["dragleave", "drop"].forEach(function (type) {
    form.addEventListener(type, function () {
      form.classList.remove("dragging");
    });
  });
  form.addEventListener("drop", function (event) {
    event.preventDefault();
    if (!event.dataTransfer || !event.dataTransfer.files.length) return;
    input.files = event.dataTransfer.files;
    form.requestSubmit();
  });
})();
