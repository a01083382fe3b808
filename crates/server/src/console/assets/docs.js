// Tidemark's API docs page (/docs): renders the OpenAPI document served by this same
// process; no external assets, so it works offline and behind firewalls. Every string from
// the document is set as text (textContent), never parsed as HTML.
(function () {
  "use strict";

  // An element with attributes and children (strings become text nodes).
  function el(tag, attributes, children) {
    var node = document.createElement(tag);
    Object.keys(attributes || {}).forEach(function (name) {
      node.setAttribute(name, attributes[name]);
    });
    (children || []).forEach(function (child) {
      if (child == null || child === "") return;
      node.append(typeof child === "string" ? document.createTextNode(child) : child);
    });
    return node;
  }
  function text(value) {
    return value == null ? "" : String(value);
  }
  function schemaName(ref) {
    return ref ? String(ref).split("/").pop() : "";
  }
  function row(cells) {
    return el("tr", {}, cells.map(function (cell) {
      return el("td", {}, [cell]);
    }));
  }
  function renderSchema(schema, spec, depth) {
    depth = depth || 0;
    if (!schema || depth > 4) return [];
    if (schema.$ref) {
      var name = schemaName(schema.$ref);
      var schemas = (spec.components && spec.components.schemas) || {};
      var named = Object.prototype.hasOwnProperty.call(schemas, name) ? schemas[name] : null;
      return [el("em", {}, [name])].concat(renderSchema(named, spec, depth + 1));
    }
    if (schema.properties) {
      return [el("table", {}, Object.keys(schema.properties).map(function (key) {
        var value = schema.properties[key] || {};
        return row([el("code", {}, [key]), text(value.type || schemaName(value.$ref)), text(value.description)]);
      }))];
    }
    return [];
  }
  function firstSchema(content) {
    var media = content ? Object.keys(content) : [];
    return media.length ? (content[media[0]] || {}).schema : null;
  }
  function operation(path, method, op, spec) {
    var params = (op.parameters || []).map(function (p) {
      return row([el("code", {}, [text(p.name)]), text(p.in) + (p.required ? ", required" : ""), text(p.description)]);
    });
    var responses = Object.keys(op.responses || {}).map(function (code) {
      var response = op.responses[code] || {};
      var schema = firstSchema(response.content);
      return row([code, text(response.description), schema ? text(schemaName(schema.$ref) || schema.type) : ""]);
    });
    var body = el("div", { class: "body" }, [el("p", {}, [text(op.description)])]);
    if (params.length) body.append(el("h4", {}, ["Parameters"]), el("table", {}, params));
    if (op.requestBody) {
      body.append(el("h4", {}, ["Request body"]));
      renderSchema(firstSchema(op.requestBody.content), spec).forEach(function (node) {
        body.append(node);
      });
    }
    body.append(el("h4", {}, ["Responses"]), el("table", {}, responses));
    var verb = /^[a-z]+$/.test(method) ? method : "other";
    return el("details", {}, [
      el("summary", {}, [el("span", { class: "method " + verb }, [method.toUpperCase()]), path + " — " + text(op.summary)]),
      body,
    ]);
  }

  var info = document.getElementById("info");
  var content = document.getElementById("content");
  fetch("/v2/openapi.json")
    .then(function (response) {
      return response.json();
    })
    .then(function (spec) {
      info.replaceChildren(
        text(spec.info && spec.info.description) + " ",
        el("small", {}, ["v" + text(spec.info && spec.info.version)])
      );
      var groups = {};
      Object.keys(spec.paths || {}).forEach(function (path) {
        var item = spec.paths[path] || {};
        Object.keys(item).forEach(function (method) {
          var op = item[method] || {};
          var tag = (op.tags && op.tags[0]) || "Other";
          if (!Object.prototype.hasOwnProperty.call(groups, tag)) groups[tag] = [];
          groups[tag].push(operation(path, method, op, spec));
        });
      });
      var nodes = [];
      Object.keys(groups).sort().forEach(function (tag) {
        nodes.push(el("h2", {}, [tag]));
        nodes = nodes.concat(groups[tag]);
      });
      nodes.push(el("p", {}, [el("a", { href: "/v2/openapi.json" }, ["OpenAPI document"])]));
      content.replaceChildren.apply(content, nodes);
    })
    .catch(function (error) {
      content.textContent = "Could not load the OpenAPI document: " + error;
    });
})();
