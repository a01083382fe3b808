//! The [`CustomFieldStore`](crate::CustomFieldStore) part of the contract.

use chrono::Duration;
use serde_json::{Value, json};
use tidemark_domain::custom_fields::{
    DataType, Definition, EntityType, FieldOption, NewDefinition, StoredValue, check_value,
    filter_key, validate_new_definition,
};
use tidemark_domain::{AccountId, IdGenerator, SequentialIds};
use uuid::Uuid;

use super::{
    ALL, TestBackend, account_in, carrier_report, departed_voyage, t0, tracked, tracking_request,
};
use crate::{
    ContainerFilter, CustomFieldFilter, DefinitionFilter, DefinitionRecord, EntityRef, NewValue,
    OptionRecord, ShipmentFilter, Store, StoreError, ValueFilter,
};

/// Expands this part's cases; called by [`store_contract_tests!`](crate::store_contract_tests).
#[macro_export]
macro_rules! custom_field_contract_tests {
    ($backend:path) => {
        $crate::store_contract_tests!(@cases_in custom_fields $backend;
            definitions_are_created_found_listed_filtered_and_updated,
            an_api_slug_is_unique_per_account,
            options_are_listed_in_display_order_with_unique_values,
            a_value_is_set_replaced_and_read_back,
            shipments_and_containers_are_filtered_by_a_custom_field_value,
            deleting_a_definition_deletes_its_options_and_values,
            staged_values_never_replace_existing_ones,
            a_tracking_result_writes_the_values_staged_for_what_it_creates_or_nothing,
            another_accounts_definitions_and_values_are_not_found,
        );
    };
}

fn definition(slug: &str, name: &str, entity_type: &str, data_type: &str) -> Definition {
    validate_new_definition(&NewDefinition {
        api_slug: Some(slug.to_owned()),
        display_name: Some(name.to_owned()),
        entity_type: Some(entity_type.to_owned()),
        data_type: Some(data_type.to_owned()),
        ..NewDefinition::default()
    })
    .expect("a valid definition")
}

async fn defined(
    store: &dyn Store,
    ids: &SequentialIds,
    account: AccountId,
    definition: Definition,
) -> DefinitionRecord {
    let record = DefinitionRecord {
        id: ids.next_id(),
        account_id: account,
        definition,
        created_at: t0(),
        updated_at: t0(),
    };
    store.create_custom_field_definition(&record).await.unwrap();
    record
}

fn option(
    ids: &SequentialIds,
    definition: &DefinitionRecord,
    value: &str,
    position: Option<i32>,
) -> OptionRecord {
    OptionRecord {
        id: ids.next_id(),
        account_id: definition.account_id,
        definition_id: definition.id,
        option: FieldOption {
            value: value.to_owned(),
            label: value.to_uppercase(),
            position,
        },
        created_at: t0(),
        updated_at: t0(),
    }
}

fn new_value(
    ids: &SequentialIds,
    definition: &DefinitionRecord,
    entity_id: Uuid,
    raw: Value,
    options: &[FieldOption],
) -> NewValue {
    NewValue {
        id: ids.next_id(),
        account_id: definition.account_id,
        definition_id: definition.id,
        entity: EntityRef {
            entity_type: definition.definition.entity_type,
            id: entity_id,
        },
        value: check_value(&definition.definition, options, &raw)
            .expect("a valid value")
            .expect("not empty"),
        at: t0(),
    }
}

fn by_value(definition: &DefinitionRecord, raw: &str) -> CustomFieldFilter {
    CustomFieldFilter {
        definition_id: definition.id,
        key: filter_key(&definition.definition, raw).expect("a valid filter"),
    }
}

pub async fn definitions_are_created_found_listed_filtered_and_updated(backend: &dyn TestBackend) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let acme = account_in(store.as_ref(), &ids, "acme").await;
    let po = defined(
        store.as_ref(),
        &ids,
        acme,
        definition("po_number", "PO number", "Shipment", "short_text"),
    )
    .await;
    let mut weight_definition = definition("weight", "Weight", "Container", "number");
    weight_definition.validation.required = true;
    let weight = defined(store.as_ref(), &ids, acme, weight_definition).await;
    defined(
        store.as_ref(),
        &ids,
        acme,
        definition("port_fee", "Port fee", "Shipment", "number"),
    )
    .await;

    let found = store
        .custom_field_definition(acme, weight.id)
        .await
        .unwrap();
    let by_slug = store
        .custom_field_definition_by_slug(acme, "po_number")
        .await
        .unwrap();
    let listed = store
        .list_custom_field_definitions(acme, &DefinitionFilter::default(), ALL)
        .await
        .unwrap();
    let numbers = store
        .list_custom_field_definitions(
            acme,
            &DefinitionFilter {
                data_type: Some(DataType::Number),
                ..DefinitionFilter::default()
            },
            ALL,
        )
        .await
        .unwrap();
    let shipment_p = store
        .list_custom_field_definitions(
            acme,
            &DefinitionFilter {
                entity_type: Some(EntityType::Shipment),
                display_name_prefix: Some("p".to_owned()),
                ..DefinitionFilter::default()
            },
            ALL,
        )
        .await
        .unwrap();
    let percent = store
        .list_custom_field_definitions(
            acme,
            &DefinitionFilter {
                display_name_prefix: Some("%".to_owned()),
                ..DefinitionFilter::default()
            },
            ALL,
        )
        .await
        .unwrap();

    assert_eq!(found, weight);
    assert_eq!(by_slug, po);
    assert_eq!(listed.total, 3);
    assert_eq!(listed.items[0], po);
    let slugs = |records: &[DefinitionRecord]| {
        records
            .iter()
            .map(|r| r.definition.api_slug.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(slugs(&numbers.items), ["weight", "port_fee"]);
    assert_eq!(slugs(&shipment_p.items), ["po_number", "port_fee"]);
    assert_eq!(percent.total, 0, "a prefix is matched literally");

    let mut renamed = po.clone();
    renamed.definition.display_name = "Purchase order".to_owned();
    renamed.definition.description = Some("From the buyer".to_owned());
    renamed.updated_at = t0() + Duration::hours(1);
    store
        .update_custom_field_definition(&renamed)
        .await
        .unwrap();

    assert_eq!(
        store.custom_field_definition(acme, po.id).await.unwrap(),
        renamed
    );
}

pub async fn an_api_slug_is_unique_per_account(backend: &dyn TestBackend) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let acme = account_in(store.as_ref(), &ids, "acme").await;
    let globex = account_in(store.as_ref(), &ids, "globex").await;
    defined(
        store.as_ref(),
        &ids,
        acme,
        definition("po_number", "PO", "Shipment", "short_text"),
    )
    .await;

    let again = store
        .create_custom_field_definition(&DefinitionRecord {
            id: ids.next_id(),
            account_id: acme,
            definition: definition("po_number", "Other", "Container", "number"),
            created_at: t0(),
            updated_at: t0(),
        })
        .await;
    let elsewhere = store
        .create_custom_field_definition(&DefinitionRecord {
            id: ids.next_id(),
            account_id: globex,
            definition: definition("po_number", "PO", "Shipment", "short_text"),
            created_at: t0(),
            updated_at: t0(),
        })
        .await;

    assert!(matches!(
        again,
        Err(StoreError::Conflict {
            constraint: "custom_field_definitions_slug"
        })
    ));
    assert!(elsewhere.is_ok());
}

pub async fn options_are_listed_in_display_order_with_unique_values(backend: &dyn TestBackend) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let acme = account_in(store.as_ref(), &ids, "acme").await;
    let mode = defined(
        store.as_ref(),
        &ids,
        acme,
        definition("mode", "Mode", "Shipment", "enum"),
    )
    .await;
    let other = defined(
        store.as_ref(),
        &ids,
        acme,
        definition("other", "Other", "Shipment", "enum"),
    )
    .await;
    let rail = option(&ids, &mode, "rail", None);
    for record in [
        option(&ids, &mode, "sea", Some(2)),
        rail.clone(),
        option(&ids, &mode, "air", Some(1)),
        option(&ids, &mode, "barge", None),
        option(&ids, &other, "sea", None),
    ] {
        store.create_custom_field_option(&record).await.unwrap();
    }

    let duplicate = store
        .create_custom_field_option(&option(&ids, &mode, "sea", None))
        .await;
    let mut relabelled = rail.clone();
    relabelled.option.label = "By rail".to_owned();
    relabelled.option.position = Some(0);
    relabelled.updated_at = t0() + Duration::hours(1);
    store.update_custom_field_option(&relabelled).await.unwrap();
    let air = store
        .custom_field_options(acme, mode.id)
        .await
        .unwrap()
        .into_iter()
        .find(|o| o.option.value == "air")
        .unwrap();
    store
        .delete_custom_field_option(acme, mode.id, air.id)
        .await
        .unwrap();

    assert!(matches!(
        duplicate,
        Err(StoreError::Conflict {
            constraint: "custom_field_options_value"
        })
    ));
    let values: Vec<String> = store
        .custom_field_options(acme, mode.id)
        .await
        .unwrap()
        .into_iter()
        .map(|o| o.option.value)
        .collect();
    assert_eq!(values, ["rail", "sea", "barge"]);
    assert_eq!(
        store
            .custom_field_option(acme, mode.id, rail.id)
            .await
            .unwrap(),
        relabelled
    );
    assert!(matches!(
        store.custom_field_option(acme, other.id, rail.id).await,
        Err(StoreError::NotFound)
    ));
}

pub async fn a_value_is_set_replaced_and_read_back(backend: &dyn TestBackend) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let acme = account_in(store.as_ref(), &ids, "acme").await;
    let (_, update) = tracked(store.as_ref(), &ids, acme, "TESTBL0001", departed_voyage()).await;
    let shipment = update.shipment.id.0;
    let weight = defined(
        store.as_ref(),
        &ids,
        acme,
        definition("weight", "Weight", "Shipment", "number"),
    )
    .await;

    let first = store
        .set_custom_field_value(&new_value(&ids, &weight, shipment, json!(12.5), &[]))
        .await
        .unwrap();
    let mut replacement = new_value(&ids, &weight, shipment, json!("13"), &[]);
    replacement.at = t0() + Duration::hours(1);
    let second = store.set_custom_field_value(&replacement).await.unwrap();

    assert_eq!(first.api_slug, "weight");
    assert_eq!(first.value, json!(12.5));
    assert_eq!(second.id, first.id, "a replaced value keeps its id");
    assert_eq!(second.value, json!(13));
    assert_eq!(second.created_at, t0());
    assert_eq!(second.updated_at, t0() + Duration::hours(1));
    assert_eq!(
        StoredValue::from_json(&weight.definition, &second.value).unwrap(),
        Some(replacement.value.clone())
    );
    assert_eq!(
        store.custom_field_value(acme, first.id).await.unwrap(),
        second
    );
    assert_eq!(
        store
            .custom_field_value_of(acme, weight.id, shipment)
            .await
            .unwrap(),
        second
    );
    let of_shipment = store
        .list_custom_field_values(
            acme,
            &ValueFilter {
                entity_id: Some(shipment),
                ..ValueFilter::default()
            },
            ALL,
        )
        .await
        .unwrap();
    assert_eq!(of_shipment.items, vec![second.clone()]);

    store
        .delete_custom_field_value(acme, second.id)
        .await
        .unwrap();

    assert!(matches!(
        store.custom_field_value(acme, second.id).await,
        Err(StoreError::NotFound)
    ));
    assert!(matches!(
        store.delete_custom_field_value(acme, second.id).await,
        Err(StoreError::NotFound)
    ));
}

pub async fn shipments_and_containers_are_filtered_by_a_custom_field_value(
    backend: &dyn TestBackend,
) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let acme = account_in(store.as_ref(), &ids, "acme").await;
    let (_, first) = tracked(store.as_ref(), &ids, acme, "TESTBL0001", departed_voyage()).await;
    let (_, second) = tracked(store.as_ref(), &ids, acme, "TESTBL0002", departed_voyage()).await;
    let (_, third) = tracked(store.as_ref(), &ids, acme, "TESTBL0003", departed_voyage()).await;
    let po = defined(
        store.as_ref(),
        &ids,
        acme,
        definition("po", "PO", "Shipment", "short_text"),
    )
    .await;
    let flags = defined(
        store.as_ref(),
        &ids,
        acme,
        definition("flags", "Flags", "Shipment", "enum_multi"),
    )
    .await;
    let flag_options = [
        option(&ids, &flags, "hazmat", None).option,
        option(&ids, &flags, "reefer", None).option,
    ];
    let inspected = defined(
        store.as_ref(),
        &ids,
        acme,
        definition("inspected", "Inspected", "Container", "boolean"),
    )
    .await;
    for (shipment, raw) in [(&first, "PO-1"), (&second, "PO-2"), (&third, "PO-1")] {
        store
            .set_custom_field_value(&new_value(
                &ids,
                &po,
                shipment.shipment.id.0,
                json!(raw),
                &[],
            ))
            .await
            .unwrap();
    }
    store
        .set_custom_field_value(&new_value(
            &ids,
            &flags,
            first.shipment.id.0,
            json!(["hazmat", "reefer"]),
            &flag_options,
        ))
        .await
        .unwrap();
    store
        .set_custom_field_value(&new_value(
            &ids,
            &flags,
            third.shipment.id.0,
            json!(["reefer"]),
            &flag_options,
        ))
        .await
        .unwrap();
    // Replaced: the old value must no longer match.
    store
        .set_custom_field_value(&new_value(
            &ids,
            &po,
            third.shipment.id.0,
            json!("PO-3"),
            &[],
        ))
        .await
        .unwrap();
    let container = first.new_containers[0].id.0;
    store
        .set_custom_field_value(&new_value(&ids, &inspected, container, json!(true), &[]))
        .await
        .unwrap();

    let shipments = |filters: Vec<CustomFieldFilter>| {
        let store = store.clone();
        async move {
            let found = store
                .list_shipments(
                    acme,
                    &ShipmentFilter {
                        custom_fields: filters,
                        ..ShipmentFilter::default()
                    },
                    ALL,
                )
                .await
                .unwrap();
            let mut ids: Vec<_> = found.items.iter().map(|s| s.id).collect();
            ids.sort();
            (ids, found.total)
        }
    };

    assert_eq!(
        shipments(vec![by_value(&po, "PO-1")]).await,
        (vec![first.shipment.id], 1)
    );
    assert_eq!(
        shipments(vec![by_value(&flags, "reefer")]).await,
        (vec![first.shipment.id, third.shipment.id], 2)
    );
    assert_eq!(
        shipments(vec![by_value(&flags, "reefer"), by_value(&po, "PO-3")]).await,
        (vec![third.shipment.id], 1)
    );
    assert_eq!(shipments(vec![by_value(&po, "PO-9")]).await, (vec![], 0));
    let containers = store
        .list_containers(
            acme,
            &ContainerFilter {
                custom_fields: vec![by_value(&inspected, "TRUE")],
                ..ContainerFilter::default()
            },
            ALL,
        )
        .await
        .unwrap();
    assert_eq!(
        containers.items.iter().map(|c| c.id.0).collect::<Vec<_>>(),
        vec![container]
    );
}

pub async fn deleting_a_definition_deletes_its_options_and_values(backend: &dyn TestBackend) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let acme = account_in(store.as_ref(), &ids, "acme").await;
    let (_, update) = tracked(store.as_ref(), &ids, acme, "TESTBL0001", departed_voyage()).await;
    let mode = defined(
        store.as_ref(),
        &ids,
        acme,
        definition("mode", "Mode", "Shipment", "enum"),
    )
    .await;
    let sea = option(&ids, &mode, "sea", None);
    store.create_custom_field_option(&sea).await.unwrap();
    let value = store
        .set_custom_field_value(&new_value(
            &ids,
            &mode,
            update.shipment.id.0,
            json!("sea"),
            std::slice::from_ref(&sea.option),
        ))
        .await
        .unwrap();
    let filter = by_value(&mode, "sea");

    store
        .delete_custom_field_definition(acme, mode.id)
        .await
        .unwrap();

    assert!(matches!(
        store.custom_field_definition(acme, mode.id).await,
        Err(StoreError::NotFound)
    ));
    assert!(matches!(
        store.custom_field_value(acme, value.id).await,
        Err(StoreError::NotFound)
    ));
    assert!(
        store
            .custom_field_options(acme, mode.id)
            .await
            .unwrap()
            .is_empty()
    );
    let filtered = store
        .list_shipments(
            acme,
            &ShipmentFilter {
                custom_fields: vec![filter],
                ..ShipmentFilter::default()
            },
            ALL,
        )
        .await
        .unwrap();
    assert_eq!(filtered.total, 0);
    // The same slug can be defined afresh.
    defined(
        store.as_ref(),
        &ids,
        acme,
        definition("mode", "Mode", "Shipment", "short_text"),
    )
    .await;
}

pub async fn staged_values_never_replace_existing_ones(backend: &dyn TestBackend) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let acme = account_in(store.as_ref(), &ids, "acme").await;
    let (_, update) = tracked(store.as_ref(), &ids, acme, "TESTBL0001", departed_voyage()).await;
    let po = defined(
        store.as_ref(),
        &ids,
        acme,
        definition("po", "PO", "Shipment", "short_text"),
    )
    .await;
    let note = defined(
        store.as_ref(),
        &ids,
        acme,
        definition("note", "Note", "Shipment", "long_text"),
    )
    .await;
    let shipment = update.shipment.id.0;
    store
        .set_custom_field_value(&new_value(&ids, &po, shipment, json!("set by a user"), &[]))
        .await
        .unwrap();

    let written = store
        .insert_custom_field_values_if_absent(&[
            new_value(&ids, &po, shipment, json!("staged"), &[]),
            new_value(&ids, &note, shipment, json!("staged note"), &[]),
        ])
        .await
        .unwrap();

    assert_eq!(written, 1);
    let po_value = store
        .custom_field_value_of(acme, po.id, shipment)
        .await
        .unwrap();
    assert_eq!(po_value.value, json!("set by a user"));
    let note_value = store
        .custom_field_value_of(acme, note.id, shipment)
        .await
        .unwrap();
    assert_eq!(note_value.value, json!("staged note"));
    let filtered = store
        .list_shipments(
            acme,
            &ShipmentFilter {
                custom_fields: vec![by_value(&note, "staged note")],
                ..ShipmentFilter::default()
            },
            ALL,
        )
        .await
        .unwrap();
    assert_eq!(filtered.total, 1, "staged values are indexed too");
}

pub async fn another_accounts_definitions_and_values_are_not_found(backend: &dyn TestBackend) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let acme = account_in(store.as_ref(), &ids, "acme").await;
    let globex = account_in(store.as_ref(), &ids, "globex").await;
    let (_, update) = tracked(store.as_ref(), &ids, acme, "TESTBL0001", departed_voyage()).await;
    let po = defined(
        store.as_ref(),
        &ids,
        acme,
        definition("po", "PO", "Shipment", "short_text"),
    )
    .await;
    let value = store
        .set_custom_field_value(&new_value(
            &ids,
            &po,
            update.shipment.id.0,
            json!("PO-1"),
            &[],
        ))
        .await
        .unwrap();

    assert!(matches!(
        store.custom_field_definition(globex, po.id).await,
        Err(StoreError::NotFound)
    ));
    assert!(matches!(
        store.custom_field_definition_by_slug(globex, "po").await,
        Err(StoreError::NotFound)
    ));
    assert!(matches!(
        store.custom_field_value(globex, value.id).await,
        Err(StoreError::NotFound)
    ));
    assert!(matches!(
        store.delete_custom_field_value(globex, value.id).await,
        Err(StoreError::NotFound)
    ));
    assert!(matches!(
        store.delete_custom_field_definition(globex, po.id).await,
        Err(StoreError::NotFound)
    ));
    assert_eq!(
        store
            .list_custom_field_definitions(globex, &DefinitionFilter::default(), ALL)
            .await
            .unwrap()
            .total,
        0
    );
    assert_eq!(
        store
            .list_custom_field_values(globex, &ValueFilter::default(), ALL)
            .await
            .unwrap()
            .total,
        0
    );
}

pub async fn a_tracking_result_writes_the_values_staged_for_what_it_creates_or_nothing(
    backend: &dyn TestBackend,
) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let acme = account_in(store.as_ref(), &ids, "acme").await;
    let po = defined(
        store.as_ref(),
        &ids,
        acme,
        definition("po", "PO", "Shipment", "short_text"),
    )
    .await;
    let mut request = tracking_request(&ids, acme, "TESTBL0001", t0());
    store.create_tracking_request(&request).await.unwrap();
    let mut update = tidemark_domain::tracking_update::plan(
        &request,
        tidemark_domain::tracking_update::Known::default(),
        &carrier_report(departed_voyage()),
        &ids,
        t0() + Duration::hours(6),
    );
    let shipment = update.shipment.id.0;
    update.initial_custom_field_values = vec![new_value(&ids, &po, shipment, json!("PO-1"), &[])];
    request.status = tidemark_domain::TrackingRequestStatus::Created;
    request.shipment_id = Some(update.shipment.id);
    request.updated_at = t0() + Duration::hours(6);

    let stale = store
        .record_tracking_result(&request, t0() - Duration::hours(1), Some(&update), &[])
        .await;
    let after_stale = store.custom_field_value_of(acme, po.id, shipment).await;
    store
        .record_tracking_result(&request, t0(), Some(&update), &[])
        .await
        .unwrap();

    assert!(
        matches!(stale, Err(StoreError::Conflict { .. })),
        "{stale:?}"
    );
    assert!(
        matches!(after_stale, Err(StoreError::NotFound)),
        "a result that is not written writes no staged value either: {after_stale:?}"
    );
    let written = store
        .custom_field_value_of(acme, po.id, shipment)
        .await
        .unwrap();
    assert_eq!(written.value, json!("PO-1"));
}
