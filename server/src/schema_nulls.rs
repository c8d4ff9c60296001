//! Neither service has a nullable schema: a property that may be missing is
//! left out, never `null` (the JSON reader refuses `null` everywhere, see
//! `strict_json`, and answers leave absent fields out). utoipa makes every
//! `Option<T>` field nullable; this takes it back for both documents in one
//! place, so that a type says `Option` and nothing more.

use utoipa::openapi::schema::{AdditionalProperties, ArrayItems, Schema, SchemaType, Type};
use utoipa::openapi::{Content, OpenApi, RefOr};

/// Removes `null` from every schema of the document.
pub(crate) fn remove(openapi: &mut OpenApi) {
    if let Some(components) = openapi.components.as_mut() {
        components.schemas.values_mut().for_each(in_ref_or);
    }
    for operation in crate::openapi_errors::operations_mut(openapi) {
        for parameter in operation.parameters.iter_mut().flatten() {
            if let RefOr::T(parameter) = parameter {
                parameter.schema.iter_mut().for_each(in_ref_or);
            }
        }
        if let Some(RefOr::T(body)) = operation.request_body.as_mut() {
            body.content.values_mut().for_each(in_content);
        }
        for response in operation.responses.responses.values_mut() {
            if let RefOr::T(response) = response {
                response.content.values_mut().for_each(in_content);
            }
        }
    }
}

fn in_content(content: &mut RefOr<Content>) {
    if let RefOr::T(content) = content {
        content.schema.iter_mut().for_each(in_ref_or);
    }
}

fn in_ref_or(schema: &mut RefOr<Schema>) {
    let RefOr::T(inner) = schema else {
        return;
    };
    // `Option<Named>` is `oneOf: [{type: null}, {$ref: Named}]`: the
    // reference alone.
    if let Schema::OneOf(one_of) = inner {
        one_of.items.retain(|item| !is_null(item));
        if let [RefOr::Ref(only)] = one_of.items.as_slice()
            && one_of.default.is_none()
            && one_of.example.is_none()
        {
            let mut only = only.clone();
            if let Some(description) = one_of.description.take() {
                only.description = description;
            }
            *schema = RefOr::Ref(only);
            return;
        }
    }
    in_schema(inner);
}

fn in_schema(schema: &mut Schema) {
    match schema {
        Schema::Object(object) => {
            without_null(&mut object.schema_type);
            object.properties.values_mut().for_each(in_ref_or);
            if let Some(additional) = object.additional_properties.as_deref_mut()
                && let AdditionalProperties::RefOr(values) = additional
            {
                in_ref_or(values);
            }
        }
        Schema::Array(array) => {
            without_null(&mut array.schema_type);
            if let ArrayItems::RefOrSchema(items) = &mut array.items {
                in_ref_or(items);
            }
        }
        Schema::OneOf(one_of) => one_of.items.iter_mut().for_each(in_ref_or),
        Schema::AllOf(all_of) => all_of.items.iter_mut().for_each(in_ref_or),
        Schema::AnyOf(any_of) => any_of.items.iter_mut().for_each(in_ref_or),
        _ => {}
    }
}

/// `type: [T, "null"]` becomes `type: T`.
fn without_null(schema_type: &mut SchemaType) {
    if let SchemaType::Array(types) = schema_type {
        types.retain(|kind| *kind != Type::Null);
        if let [only] = types.as_slice() {
            *schema_type = SchemaType::Type(only.clone());
        }
    }
}

fn is_null(schema: &RefOr<Schema>) -> bool {
    matches!(
        schema,
        RefOr::T(Schema::Object(object)) if object.schema_type == SchemaType::Type(Type::Null)
    )
}
