//! The rules both services' documents follow whatever the handlers'
//! annotations say, applied in one place:
//!
//! - An operation's id is its handler's name in camelCase (`get_pet_by_id`
//!   answers `getPetById`): the annotations name no ids, and a handler
//!   cannot be named other than its operation.
//! - No schema is nullable: a property that may be missing is left out,
//!   never `null` (the JSON reader refuses `null` everywhere, see
//!   `strict_json`, and answers leave absent fields out). utoipa makes every
//!   `Option<T>` field nullable; this takes it back, so that a type says
//!   `Option` and nothing more.

use utoipa::openapi::schema::{AdditionalProperties, ArrayItems, Schema, SchemaType, Type};
use utoipa::openapi::{Content, OpenApi, RefOr};

/// Applies the rules to a service's document.
pub(crate) fn apply(openapi: &mut OpenApi) {
    if let Some(components) = openapi.components.as_mut() {
        components.schemas.values_mut().for_each(in_ref_or);
    }
    for operation in crate::http::openapi_errors::operations_mut(openapi) {
        if let Some(id) = operation.operation_id.as_mut() {
            *id = camel_case(id);
        }
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

/// `get_pet_by_id` -> `getPetById`.
fn camel_case(snake: &str) -> String {
    let mut words = snake.split('_');
    let mut camel = words.next().unwrap_or_default().to_owned();
    for word in words {
        let mut letters = word.chars();
        if let Some(first) = letters.next() {
            camel.extend(first.to_uppercase());
            camel.push_str(letters.as_str());
        }
    }
    camel
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

#[cfg(test)]
mod tests {
    use super::camel_case;

    #[test]
    fn operation_ids_are_handler_names_in_camel_case() {
        assert_eq!(camel_case("get_pet_by_id"), "getPetById");
        assert_eq!(
            camel_case("unsubscribe_newsletter_one_click"),
            "unsubscribeNewsletterOneClick"
        );
        assert_eq!(camel_case("getPetById"), "getPetById");
        assert_eq!(camel_case("list_oauth_clients"), "listOauthClients");
    }
}
