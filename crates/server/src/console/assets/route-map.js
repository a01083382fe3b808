// Tidemark console: the shipment page's route map, drawn with Leaflet over an offline
// basemap (Natural Earth 1:50m land, served by Tidemark as TopoJSON). Nothing is fetched
// from any other host. The route comes from /shipments/{id}/route-map (the same use case
// as the API's map_geojson), with longitudes continuous along the route, so a Pacific
// voyage may run past ±180°: the land is drawn three times, a world apart, beneath it.
// The route is fetched again every few seconds so new vessel positions show.
(function () {
  "use strict";
  var element = document.getElementById("route-map");
  var status = document.getElementById("route-map-status");
  if (!element || !window.L || !window.topojson) return;

  var say = function (text) {
    if (status) status.textContent = text;
  };

  var map = L.map(element, {
    minZoom: 1,
    maxZoom: 11,
    zoomSnap: 0.25,
    worldCopyJump: false,
  });
  map.attributionControl.setPrefix("Leaflet");
  map.attributionControl.addAttribution("Land: Natural Earth");
  map.setView([20, 0], 1.5);
  map.createPane("land").style.zIndex = 250;
  // The vessel above the port labels, which may sit on it just after departure.
  map.createPane("vessel").style.zIndex = 660;

  fetch(element.dataset.land, { credentials: "same-origin" })
    .then(function (response) {
      if (!response.ok) throw new Error("basemap " + response.status);
      return response.json();
    })
    .then(function (topology) {
      var land = topojson.feature(topology, topology.objects.land);
      [-360, 0, 360].forEach(function (shift) {
        L.geoJSON(land, {
          pane: "land",
          interactive: false,
          coordsToLatLng: function (c) {
            return L.latLng(c[1], c[0] + shift);
          },
          style: { className: "land", color: "#8c9aa6", weight: 0.7, fillColor: "#f3efe4", fillOpacity: 1 },
        }).addTo(map);
      });
    })
    .catch(function () {
      say("The basemap could not be loaded.");
    });

  var route = L.featureGroup().addTo(map);
  var fitted = false;

  var time = function (iso) {
    if (!iso) return "";
    var at = new Date(iso);
    return isNaN(at) ? "" : at.toISOString().slice(0, 16).replace("T", " ") + " UTC";
  };
  // Names come from carriers and AIS: they are text, never markup. Leaflet inserts a
  // string tooltip as HTML, so every tooltip is an element whose text is set.
  var label = function (text) {
    var span = document.createElement("span");
    span.textContent = text;
    return span;
  };
  var latLngs = function (coordinates) {
    return coordinates.map(function (c) {
      return [c[1], c[0]];
    });
  };

  function draw(collection) {
    route.clearLayers();
    var vessel = null;
    var ports = 0;
    var lines = [];
    (collection.features || []).forEach(function (feature) {
      var p = feature.properties || {};
      var g = feature.geometry || {};
      if (g.type === "LineString") {
        var ahead = p.feature_type === "estimated_full_legs" || p.feature_type === "estimated_partial_leg";
        lines.push(
          L.polyline(latLngs(g.coordinates), {
            className: ahead ? "route-line route-ahead" : "route-line route-track",
            color: ahead ? "#4a5561" : "#0b5cad",
            weight: ahead ? 2.5 : 3.5,
            dashArray: ahead ? "7 6" : null,
            interactive: false,
          })
        );
      } else if (g.type === "Point" && p.feature_type === "port") {
        ports += 1;
        L.circleMarker([g.coordinates[1], g.coordinates[0]], {
          className: "route-port",
          radius: 6,
          color: "#102a43",
          weight: 2,
          fillColor: "#ffffff",
          fillOpacity: 1,
        })
          .bindTooltip(label(p.label + " · " + p.name), { permanent: true, direction: "auto", offset: [0, 0], className: "port-label" })
          .addTo(route);
      } else if (g.type === "Point" && p.feature_type === "current_vessel") {
        vessel = p;
        L.circleMarker([g.coordinates[1], g.coordinates[0]], {
          className: "route-vessel",
          pane: "vessel",
          radius: 8,
          color: "#ffffff",
          weight: 2.5,
          fillColor: "#c2410c",
          fillOpacity: 1,
        })
          .bindTooltip(
            label(
              p.vessel_name + (p.vessel_location_speed != null ? " · " + Number(p.vessel_location_speed).toFixed(1) + " kn" : "") +
                " · " + time(p.vessel_location_timestamp)
            ),
            { direction: "top", offset: [0, -8] }
          )
          .addTo(route);
      }
    });
    // Lines beneath the markers.
    lines.forEach(function (line) {
      line.addTo(route);
      line.bringToBack();
    });

    if (!route.getLayers().length) {
      say("No route known yet; it appears once the carrier names the ports.");
      return;
    }
    if (!fitted) {
      map.fitBounds(route.getBounds(), { padding: [40, 40], maxZoom: 6, animate: false });
      fitted = true;
    }
    if (vessel) {
      say(
        vessel.vessel_name + " between " + vessel.departure_port_name + " and " + vessel.arrival_port_name +
          ", position of " + time(vessel.vessel_location_timestamp) +
          (vessel.arrival_port_eta ? "; ETA " + time(vessel.arrival_port_eta) : "") + "."
      );
    } else {
      say(ports + " ports on the route; no vessel at sea on it now.");
    }
  }

  function refresh() {
    fetch(element.dataset.src, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (response) {
        var type = response.headers.get("content-type") || "";
        if (!response.ok || type.indexOf("json") < 0) throw new Error("route " + response.status);
        return response.json();
      })
      .then(draw)
      .catch(function () {
        say("The route could not be updated (signed out?); it will be tried again.");
      });
  }

  refresh();
  var seconds = Number(element.dataset.refreshSeconds) || 15;
  setInterval(refresh, seconds * 1000);
})();
