//! The tracking vocabulary shared with Terminal49's v2 API: request types, tracking request
//! statuses and failure reasons, container statuses, transport event names, and the
//! validation of a request number.
//!
//! The values are Terminal49's, as listed in its OpenAPI document
//! (`reference/terminal49/NOTES.md` §6, §8, §9 and §12.1); clients match on these strings.

use crate::container_number::ContainerNumber;

/// Declares a string-valued enum with `as_str`, `parse`, `ALL`, `Display`, and serde
/// through the same strings, so the wire spelling is written once per value.
#[macro_export]
macro_rules! string_enum {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $( $(#[$vmeta:meta])* $variant:ident => $text:literal, )+
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $name {
            $( $(#[$vmeta])* $variant, )+
        }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [Self] = &[ $( Self::$variant, )+ ];

            /// The value as written on the wire.
            pub fn as_str(self) -> &'static str {
                match self {
                    $( Self::$variant => $text, )+
                }
            }

            /// The value for its wire spelling, or `None` for anything else.
            pub fn parse(value: &str) -> Option<Self> {
                match value {
                    $( $text => Some(Self::$variant), )+
                    _ => None,
                }
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl ::serde::Serialize for $name {
            fn serialize<S: ::serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        impl<'de> ::serde::Deserialize<'de> for $name {
            fn deserialize<D: ::serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let text = <String as ::serde::Deserialize>::deserialize(deserializer)?;
                Self::parse(&text).ok_or_else(|| {
                    let expected: Vec<&str> = Self::ALL.iter().map(|v| v.as_str()).collect();
                    ::serde::de::Error::custom(format_args!(
                        "unknown value {text:?}, expected one of {}",
                        expected.join(", ")
                    ))
                })
            }
        }
    };
}

string_enum! {
    /// What a tracking request's number identifies.
    pub enum RequestType {
        BillOfLading => "bill_of_lading",
        BookingNumber => "booking_number",
        /// Marked "BETA" by Terminal49; the number must pass the ISO 6346 check.
        Container => "container",
    }
}

string_enum! {
    /// Where a tracking request is in its lifecycle (NOTES §6).
    pub enum TrackingRequestStatus {
        /// Created, not yet resolved with the carrier; transient errors keep it here while
        /// retrying.
        Pending => "pending",
        /// The carrier does not know the BL or booking yet; re-checked daily for 7 days.
        AwaitingManifest => "awaiting_manifest",
        /// The shipment and its containers exist and are being tracked.
        Created => "created",
        /// Gave up; `failed_reason` says why.
        Failed => "failed",
        /// Tracking of the shipment ended (arrived long ago, cancelled, stopped by the user…).
        TrackingStopped => "tracking_stopped",
    }
}

string_enum! {
    /// Why a tracking request failed, or why it is still retrying (NOTES §6).
    pub enum FailedReason {
        BookingCancelled => "booking_cancelled",
        Duplicate => "duplicate",
        /// Still not found after the 7-day `awaiting_manifest` window.
        Expired => "expired",
        InternalProcessingError => "internal_processing_error",
        InvalidNumber => "invalid_number",
        NotFound => "not_found",
        /// Transient errors did not clear within the retry budget.
        RetriesExhausted => "retries_exhausted",
        ShippingLineUnreachable => "shipping_line_unreachable",
        UnrecognizedResponse => "unrecognized_response",
        DataUnavailable => "data_unavailable",
        ScacAutoDetectFailed => "scac_auto_detect_failed",
    }
}

impl FailedReason {
    /// Whether the reason is shown while the request is still being retried (status stays
    /// `pending`), rather than on a `failed` request. Terminal49's lifecycle guide names
    /// these three as temporary.
    pub fn is_temporary(self) -> bool {
        matches!(
            self,
            Self::UnrecognizedResponse
                | Self::ShippingLineUnreachable
                | Self::InternalProcessingError
        )
    }
}

string_enum! {
    /// A container's `current_status` (NOTES §8: the 13 values of Terminal49's OpenAPI enum;
    /// statuses are not linear).
    pub enum ContainerStatus {
        /// Shown as "No Status".
        New => "new",
        OnShip => "on_ship",
        Available => "available",
        NotAvailable => "not_available",
        /// At the terminal, not yet available.
        Grounded => "grounded",
        OnRail => "on_rail",
        PickedUp => "picked_up",
        /// Available at the shipper's facility.
        OffDock => "off_dock",
        /// Only ever set by hand.
        Delivered => "delivered",
        /// In the spec enum but not in the status guide.
        Dropped => "dropped",
        /// In the spec enum but not in the status guide.
        Loaded => "loaded",
        /// Tracking ends here.
        EmptyReturned => "empty_returned",
        AwaitingInlandTransfer => "awaiting_inland_transfer",
    }
}

string_enum! {
    /// The `container.transport.*` event names (NOTES §9 and §12.1): the milestones a
    /// container passes, as they appear in `transport_event.event` and webhook `event`.
    pub enum TransportEventName {
        // Origin.
        EmptyOut => "container.transport.empty_out",
        FullIn => "container.transport.full_in",
        VesselLoaded => "container.transport.vessel_loaded",
        VesselDeparted => "container.transport.vessel_departed",
        // Transshipment.
        TransshipmentArrived => "container.transport.transshipment_arrived",
        TransshipmentDischarged => "container.transport.transshipment_discharged",
        TransshipmentLoaded => "container.transport.transshipment_loaded",
        TransshipmentDeparted => "container.transport.transshipment_departed",
        // Feeder vessel or barge.
        FeederArrived => "container.transport.feeder_arrived",
        FeederDischarged => "container.transport.feeder_discharged",
        FeederLoaded => "container.transport.feeder_loaded",
        FeederDeparted => "container.transport.feeder_departed",
        // Destination.
        VesselArrived => "container.transport.vessel_arrived",
        VesselBerthed => "container.transport.vessel_berthed",
        VesselDischarged => "container.transport.vessel_discharged",
        Available => "container.transport.available",
        NotAvailable => "container.transport.not_available",
        FullOut => "container.transport.full_out",
        /// Set by hand only: no carrier event maps to it.
        Delivered => "container.transport.delivered",
        EmptyIn => "container.transport.empty_in",
        // Rail.
        RailLoaded => "container.transport.rail_loaded",
        RailDeparted => "container.transport.rail_departed",
        RailArrived => "container.transport.rail_arrived",
        RailUnloaded => "container.transport.rail_unloaded",
        ArrivedAtInlandDestination => "container.transport.arrived_at_inland_destination",
        // Estimates: Terminal49 has these three only, none for feeder, rail or transshipment.
        EstimatedVesselDeparted => "container.transport.estimated.vessel_departed",
        EstimatedVesselArrived => "container.transport.estimated.vessel_arrived",
        EstimatedArrivedAtInlandDestination =>
            "container.transport.estimated.arrived_at_inland_destination",
        // Pick-up notices: a last free day or an appointment changed; the event's `value`
        // carries the new one (empty when it was withdrawn).
        PickupLfdChanged => "container.pickup_lfd.changed",
        PickupLfdLineChanged => "container.pickup_lfd_line.changed",
        PickupLfdTerminalChanged => "container.pickup_lfd_terminal.changed",
        PickupLfdRailChanged => "container.pickup_lfd_rail.changed",
        PickupAppointmentChanged => "container.pickup_appointment.changed",
    }
}

impl TransportEventName {
    /// The name Terminal49 gives a carrier's raw event of this kind (`vessel_loaded`), or
    /// `None` where its raw event vocabulary has no such name.
    pub fn raw_event_name(self) -> Option<&'static str> {
        Some(match self {
            Self::EmptyOut => "empty_out",
            Self::FullIn => "full_in",
            Self::VesselLoaded => "vessel_loaded",
            Self::VesselDeparted | Self::EstimatedVesselDeparted => "vessel_departed",
            Self::TransshipmentArrived => "transshipment_arrived",
            Self::TransshipmentDischarged => "transshipment_discharged",
            Self::TransshipmentLoaded => "transshipment_loaded",
            Self::TransshipmentDeparted => "transshipment_departed",
            Self::FeederArrived => "feeder_arrived",
            Self::FeederDischarged => "feeder_discharged",
            Self::FeederLoaded => "feeder_loaded",
            Self::FeederDeparted => "feeder_departed",
            Self::VesselArrived | Self::EstimatedVesselArrived => "vessel_arrived",
            Self::VesselDischarged => "vessel_discharged",
            Self::Available => "available",
            Self::FullOut => "full_out",
            Self::Delivered => "delivered",
            Self::EmptyIn => "empty_in",
            Self::RailLoaded => "rail_loaded",
            Self::RailDeparted => "rail_departed",
            Self::RailArrived => "rail_arrived",
            Self::RailUnloaded => "rail_unloaded",
            Self::ArrivedAtInlandDestination | Self::EstimatedArrivedAtInlandDestination => {
                "arrived_at_destination"
            }
            Self::VesselBerthed
            | Self::NotAvailable
            | Self::PickupLfdChanged
            | Self::PickupLfdLineChanged
            | Self::PickupLfdTerminalChanged
            | Self::PickupLfdRailChanged
            | Self::PickupAppointmentChanged => return None,
        })
    }

    /// Whether the event announces a changed last free day or appointment rather than a
    /// move of the container: it never sets the container's status or a milestone field.
    pub fn is_pickup_notice(self) -> bool {
        matches!(
            self,
            Self::PickupLfdChanged
                | Self::PickupLfdLineChanged
                | Self::PickupLfdTerminalChanged
                | Self::PickupLfdRailChanged
                | Self::PickupAppointmentChanged
        )
    }

    /// Whether the event announces an estimate rather than something that happened.
    pub fn is_estimate(self) -> bool {
        matches!(
            self,
            Self::EstimatedVesselDeparted
                | Self::EstimatedVesselArrived
                | Self::EstimatedArrivedAtInlandDestination
        )
    }
}

/// The shortest request number Terminal49 accepts.
pub const MIN_REQUEST_NUMBER_LENGTH: usize = 6;

/// A reason to refuse a tracking request's number, with Terminal49's 422 `code` and wording
/// (NOTES §4). The API layer points these at `/data/attributes/request_number`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RequestNumberProblem {
    /// Empty or only whitespace.
    #[error("Request number can't be blank")]
    Blank,
    /// Fewer than [`MIN_REQUEST_NUMBER_LENGTH`] characters.
    #[error("Request number is too short (minimum is {MIN_REQUEST_NUMBER_LENGTH} characters)")]
    TooShort,
    /// A container request whose number fails ISO 6346.
    #[error("Request number '{number}' is not a valid container number")]
    InvalidContainer { number: String },
}

impl RequestNumberProblem {
    /// Terminal49's error `code`.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Blank => "blank",
            Self::TooShort => "too_short",
            Self::InvalidContainer { .. } => "invalid_container",
        }
    }
}

/// Checks a tracking request's number the way Terminal49 does, returning every problem found.
///
/// Leading and trailing whitespace is ignored. A blank number reports `blank` alone, since
/// the other checks say nothing more about it. Otherwise the length and, for container
/// requests, the ISO 6346 check are independent rules, so a short container number gets both
/// `too_short` and `invalid_container`.
pub fn validate_request_number(
    request_type: RequestType,
    number: &str,
) -> Result<(), Vec<RequestNumberProblem>> {
    let trimmed = number.trim();
    if trimmed.is_empty() {
        return Err(vec![RequestNumberProblem::Blank]);
    }
    let mut problems = Vec::new();
    if trimmed.chars().count() < MIN_REQUEST_NUMBER_LENGTH {
        problems.push(RequestNumberProblem::TooShort);
    }
    if request_type == RequestType::Container && ContainerNumber::parse(trimmed).is_err() {
        problems.push(RequestNumberProblem::InvalidContainer {
            number: trimmed.to_owned(),
        });
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems)
    }
}

#[cfg(test)]
mod tests {
    use std::fmt;

    use serde::{Deserialize, Serialize};

    use super::*;

    /// Every value of every enum survives `as_str` → `parse` and serde, with the same
    /// spelling in both.
    fn assert_round_trips<T>(all: &[T], as_str: fn(T) -> &'static str, parse: fn(&str) -> Option<T>)
    where
        T: Copy + PartialEq + fmt::Debug + Serialize + for<'de> Deserialize<'de>,
    {
        for &value in all {
            let text = as_str(value);
            let json = serde_json::to_string(&value).expect("serializes");
            let back: T = serde_json::from_str(&json).expect("deserializes");

            assert_eq!(parse(text), Some(value), "{text}");
            assert_eq!(json, format!("\"{text}\""));
            assert_eq!(back, value);
        }
    }

    #[test]
    fn every_enum_value_round_trips_through_its_spelling() {
        assert_round_trips(RequestType::ALL, RequestType::as_str, RequestType::parse);
        assert_round_trips(
            TrackingRequestStatus::ALL,
            TrackingRequestStatus::as_str,
            TrackingRequestStatus::parse,
        );
        assert_round_trips(FailedReason::ALL, FailedReason::as_str, FailedReason::parse);
        assert_round_trips(
            ContainerStatus::ALL,
            ContainerStatus::as_str,
            ContainerStatus::parse,
        );
        assert_round_trips(
            TransportEventName::ALL,
            TransportEventName::as_str,
            TransportEventName::parse,
        );
    }

    #[test]
    fn the_enums_have_terminal49s_number_of_values() {
        assert_eq!(RequestType::ALL.len(), 3);
        assert_eq!(TrackingRequestStatus::ALL.len(), 5);
        assert_eq!(FailedReason::ALL.len(), 11);
        assert_eq!(ContainerStatus::ALL.len(), 13);
        // 43 webhook events, less 4 tracking_request, 3 container, 2 document and
        // shipment.estimated.arrival (NOTES §9: the pick-up notices are transport events).
        assert_eq!(TransportEventName::ALL.len(), 43 - 4 - 3 - 2 - 1);
    }

    #[test]
    fn transport_event_names_are_moves_or_pickup_notices() {
        for name in TransportEventName::ALL {
            let is_move = name.as_str().starts_with("container.transport.");
            let is_notice = name.as_str().starts_with("container.pickup_");
            assert!(is_move != is_notice, "{name}");
            assert_eq!(name.is_pickup_notice(), is_notice, "{name}");
        }
    }

    #[test]
    fn only_the_three_estimated_names_are_estimates() {
        let estimates: Vec<&str> = TransportEventName::ALL
            .iter()
            .filter(|name| name.is_estimate())
            .map(|name| name.as_str())
            .collect();

        assert_eq!(
            estimates,
            [
                "container.transport.estimated.vessel_departed",
                "container.transport.estimated.vessel_arrived",
                "container.transport.estimated.arrived_at_inland_destination",
            ]
        );
    }

    #[test]
    fn unknown_spellings_are_refused() {
        assert_eq!(RequestType::parse("booking"), None);
        assert_eq!(TrackingRequestStatus::parse("Pending"), None);
        assert_eq!(TransportEventName::parse("vessel_arrived"), None);
        assert!(serde_json::from_str::<ContainerStatus>("\"at_sea\"").is_err());
    }

    #[test]
    fn only_three_failed_reasons_are_temporary() {
        let temporary: Vec<FailedReason> = FailedReason::ALL
            .iter()
            .copied()
            .filter(|reason| reason.is_temporary())
            .collect();

        assert_eq!(
            temporary,
            [
                FailedReason::InternalProcessingError,
                FailedReason::ShippingLineUnreachable,
                FailedReason::UnrecognizedResponse,
            ]
        );
    }

    #[test]
    fn a_blank_request_number_is_reported_as_blank_only() {
        let result = validate_request_number(RequestType::Container, "   ");

        assert_eq!(result, Err(vec![RequestNumberProblem::Blank]));
    }

    #[test]
    fn a_request_number_under_six_characters_is_too_short() {
        let result = validate_request_number(RequestType::BillOfLading, "ABC12");

        let problems = result.expect_err("five characters are too few");
        assert_eq!(problems, [RequestNumberProblem::TooShort]);
        assert_eq!(problems[0].code(), "too_short");
        assert_eq!(
            problems[0].to_string(),
            "Request number is too short (minimum is 6 characters)"
        );
    }

    #[test]
    fn six_characters_are_enough_for_a_bill_of_lading_or_booking() {
        assert_eq!(
            validate_request_number(RequestType::BillOfLading, "ABC123"),
            Ok(())
        );
        assert_eq!(
            validate_request_number(RequestType::BookingNumber, " 123456 "),
            Ok(())
        );
    }

    #[test]
    fn a_container_request_needs_a_valid_iso_6346_number() {
        let valid = validate_request_number(RequestType::Container, "csqu3054383");
        let invalid = validate_request_number(RequestType::Container, "MSCU1234567");

        assert_eq!(valid, Ok(()));
        let problems = invalid.expect_err("the check digit is wrong");
        assert_eq!(problems.len(), 1);
        assert_eq!(problems[0].code(), "invalid_container");
        assert_eq!(
            problems[0].to_string(),
            "Request number 'MSCU1234567' is not a valid container number"
        );
    }

    #[test]
    fn a_short_container_number_is_both_too_short_and_invalid() {
        let result = validate_request_number(RequestType::Container, "MSCU1");

        let codes: Vec<&str> = result
            .expect_err("far too short")
            .iter()
            .map(RequestNumberProblem::code)
            .collect();
        assert_eq!(codes, ["too_short", "invalid_container"]);
    }

    #[test]
    fn bill_of_lading_numbers_are_not_held_to_iso_6346() {
        let result = validate_request_number(RequestType::BillOfLading, "MSCU1234567");

        assert_eq!(result, Ok(()));
    }
}
