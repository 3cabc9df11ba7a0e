//! `#[derive(ReadJson)]`: `h123_shared::json`'s reader for a type, from the type's own
//! `#[serde(...)]` attributes, so its fields are never listed twice.
//!
//! It reads what serde's `Deserialize` reads, with serde's meaning: `rename_all` (`lowercase`,
//! `UPPERCASE`, `snake_case`), `rename`, field and container `default`, `flatten`,
//! `transparent`, `tag` (internally tagged enums of unit and struct variants) and unit enums as
//! strings. `skip_serializing_if` and `deny_unknown_fields` say nothing about reading here
//! (unknown fields are always ignored). Any other serde attribute, or a shape this reader does
//! not know (generics, tuple structs that are not `transparent`, externally tagged data
//! variants), is a compile error naming it, so the reader never silently disagrees with serde.
//!
//! The impl reads in place: `placeholder` builds the value a read starts from (each field's
//! placeholder, or the `Default` a missing field keeps), and `read_in` sets each field through
//! `json::set` (one non-generic function for every field of every type), so a failed read needs
//! no clean-up code per field. The generated code names `::h123_shared::json`, which
//! `h123-shared` itself also answers to (`extern crate self as h123_shared`).
//!
//! Deliberately absent: duplicate keys are not refused (the first one counts), a struct is not
//! read from an array (serde's sequence form), and a flattened field also sees the keys its
//! container reads.

use proc_macro::TokenStream;
use proc_macro2::TokenStream as Tokens;
use quote::quote;
use syn::ext::IdentExt;
use syn::meta::ParseNestedMeta;
use syn::spanned::Spanned;
use syn::{Attribute, Data, DeriveInput, Fields, Ident, LitStr, Token};

/// Derives `h123_shared::json::ReadJson` from the type's serde attributes.
#[proc_macro_derive(ReadJson, attributes(serde))]
pub fn derive_read_json(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as DeriveInput);
    expand(&input)
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

/// The `ReadJson` impl of `input`, or why there can be none.
fn expand(input: &DeriveInput) -> syn::Result<Tokens> {
    if !input.generics.params.is_empty() {
        return Err(syn::Error::new(
            input.generics.span(),
            "ReadJson does not support generic types",
        ));
    }
    let container = Container::parse(&input.attrs)?;
    let body = match &input.data {
        Data::Struct(data)
            if container.transparent || matches!(data.fields, Fields::Unnamed(_)) =>
        {
            transparent(input, &container, &data.fields)?
        }
        Data::Struct(data) => {
            container.refuse_tag(input)?;
            let Fields::Named(fields) = &data.fields else {
                return Err(syn::Error::new(
                    input.ident.span(),
                    "ReadJson does not support unit structs",
                ));
            };
            structure(&container, &plan(&fields.named, container.rename_all)?)
        }
        Data::Enum(data) => enumeration(input, &container, data)?,
        Data::Union(_) => {
            return Err(syn::Error::new(
                input.ident.span(),
                "ReadJson does not support unions",
            ));
        }
    };
    let name = &input.ident;
    let Body {
        read_in,
        placeholder,
        missing,
    } = body;
    Ok(quote! {
        impl ::h123_shared::json::ReadJson for #name {
            fn read_in(
                &mut self,
                __value: &::h123_shared::json::Json<'_>,
            ) -> ::core::result::Result<(), ::h123_shared::json::JsonError> {
                #read_in
            }

            fn placeholder() -> Self {
                #placeholder
            }

            #missing
        }
    })
}

/// The methods' bodies: `read_in`'s, `placeholder`'s, and `missing` when it is not the
/// trait's default.
struct Body {
    read_in: Tokens,
    placeholder: Tokens,
    missing: Option<Tokens>,
}

/// How one field is read.
struct FieldPlan<'a> {
    ident: &'a Ident,
    ty: &'a syn::Type,
    /// Its name in JSON.
    key: String,
    /// `serde(default)`: missing, it is the type's `Default`.
    default: bool,
    /// `serde(flatten)`: read from the whole object.
    flatten: bool,
}

/// How each of `fields` is read, from their serde attributes.
fn plan(
    fields: &syn::punctuated::Punctuated<syn::Field, Token![,]>,
    rename_all: Option<Case>,
) -> syn::Result<Vec<FieldPlan<'_>>> {
    let mut plans = Vec::new();
    for field in fields {
        let attrs = FieldAttrs::parse(&field.attrs)?;
        let ident = field.ident.as_ref().expect("named fields have names");
        if attrs.flatten && (attrs.rename.is_some() || attrs.default) {
            return Err(syn::Error::new(
                field.span(),
                "ReadJson supports `serde(flatten)` alone on a field",
            ));
        }
        let key = match (attrs.rename, rename_all) {
            (Some(name), _) => name,
            (None, Some(case)) => case.field(&ident.unraw().to_string()),
            (None, None) => ident.unraw().to_string(),
        };
        plans.push(FieldPlan {
            ident,
            ty: &field.ty,
            key,
            default: attrs.default,
            flatten: attrs.flatten,
        });
    }
    Ok(plans)
}

/// The value `field` holds before it is read: its type's `Default` for `serde(default)` (what
/// a missing field keeps), else its type's placeholder.
fn initial(field: &FieldPlan<'_>) -> Tokens {
    let ty = field.ty;
    match field.default {
        true => quote! { <#ty as ::core::default::Default>::default() },
        false => quote! { <#ty as ::h123_shared::json::ReadJson>::placeholder() },
    }
}

/// The statement that reads `field` into `place` (`self.name`, or a local) in place.
///
/// A field with a default (its own, or the container's) is read only when present.
fn read_into(field: &FieldPlan<'_>, place: &Tokens, container_default: bool) -> Tokens {
    let (ty, key) = (field.ty, &field.key);
    if field.flatten {
        return quote! {
            <#ty as ::h123_shared::json::ReadJson>::read_in(&mut #place, __value)?;
        };
    }
    let set = match field.default || container_default {
        true => quote! { set_if_present },
        false => quote! { set },
    };
    quote! { ::h123_shared::json::#set(&mut #place, __fields, #key)?; }
}

/// A struct of named fields, read in place.
fn structure(container: &Container, fields: &[FieldPlan<'_>]) -> Body {
    let placeholder = if container.default {
        // The container's default, but a field's own default (or a flattened field's fresh
        // value) where serde takes that instead.
        let own = fields.iter().filter(|f| f.default || f.flatten).map(|f| {
            let (ident, value) = (f.ident, initial(f));
            quote! { #ident: #value, }
        });
        quote! { Self { #(#own)* ..::core::default::Default::default() } }
    } else {
        let all = fields.iter().map(|f| {
            let (ident, value) = (f.ident, initial(f));
            quote! { #ident: #value }
        });
        quote! { Self { #(#all),* } }
    };
    let reads = fields.iter().map(|f| {
        let ident = f.ident;
        read_into(f, &quote! { self.#ident }, container.default)
    });
    Body {
        read_in: quote! {
            let __fields = __value.object()?;
            #(#reads)*
            ::core::result::Result::Ok(())
        },
        placeholder,
        missing: None,
    }
}

/// A struct read as its one field (`transparent`).
fn transparent(input: &DeriveInput, container: &Container, fields: &Fields) -> syn::Result<Body> {
    if !container.transparent {
        return Err(syn::Error::new(
            input.ident.span(),
            "ReadJson reads a tuple struct only with `serde(transparent)`",
        ));
    }
    if container.default || container.rename_all.is_some() || container.tag.is_some() {
        return Err(syn::Error::new(
            input.ident.span(),
            "ReadJson supports `serde(transparent)` alone on a struct",
        ));
    }
    let mut iter = fields.iter();
    let (Some(field), None) = (iter.next(), iter.next()) else {
        return Err(syn::Error::new(
            input.ident.span(),
            "ReadJson reads a transparent struct of exactly one field",
        ));
    };
    let attrs = FieldAttrs::parse(&field.attrs)?;
    if attrs.rename.is_some() || attrs.default || attrs.flatten {
        return Err(syn::Error::new(
            field.span(),
            "ReadJson supports no serde attribute on a transparent struct's field",
        ));
    }
    let ty = &field.ty;
    let member = match &field.ident {
        Some(name) => quote! { #name },
        None => quote! { 0 },
    };
    Ok(Body {
        read_in: quote! {
            <#ty as ::h123_shared::json::ReadJson>::read_in(&mut self.#member, __value)
        },
        placeholder: quote! {
            Self { #member: <#ty as ::h123_shared::json::ReadJson>::placeholder() }
        },
        // serde's transparent reads a missing field as its inner type does (an `Option` as None).
        missing: Some(quote! {
            fn missing(&mut self) -> ::core::result::Result<(), ::h123_shared::json::JsonError> {
                <#ty as ::h123_shared::json::ReadJson>::missing(&mut self.#member)
            }
        }),
    })
}

/// An enum: unit variants as strings, or with `tag` an object whose tag field names the variant.
fn enumeration(
    input: &DeriveInput,
    container: &Container,
    data: &syn::DataEnum,
) -> syn::Result<Body> {
    if container.default || container.transparent {
        return Err(syn::Error::new(
            input.ident.span(),
            "ReadJson supports `serde(default)` and `serde(transparent)` on structs only",
        ));
    }
    let Some(last) = data.variants.len().checked_sub(1) else {
        return Err(syn::Error::new(
            input.ident.span(),
            "ReadJson does not support enums without variants",
        ));
    };
    let mut names = Vec::new();
    let mut arms = Vec::new();
    let mut placeholder = None;
    for (index, variant) in data.variants.iter().enumerate() {
        let rename = variant_rename(&variant.attrs)?;
        names.push(match (rename, container.rename_all) {
            (Some(name), _) => name,
            (None, Some(case)) => case.variant(&variant.ident.unraw().to_string()),
            (None, None) => variant.ident.unraw().to_string(),
        });
        let ident = &variant.ident;
        let (value, unread) = match (&variant.fields, &container.tag) {
            (Fields::Unit, _) => (quote! { Self::#ident }, quote! { Self::#ident }),
            (Fields::Named(fields), Some(_)) => {
                let fields = plan(&fields.named, None)?;
                // Each field a local, read in place as a struct's fields are.
                let locals = fields.iter().map(|f| {
                    let (ident, value) = (f.ident, initial(f));
                    quote! { let mut #ident = #value; }
                });
                let reads = fields.iter().map(|f| {
                    let ident = f.ident;
                    read_into(f, &quote! { #ident }, false)
                });
                let idents: Vec<_> = fields.iter().map(|f| f.ident).collect();
                let initials = fields.iter().map(initial);
                let value = quote! {{
                    #(#locals)*
                    #(#reads)*
                    Self::#ident { #(#idents),* }
                }};
                (value, quote! { Self::#ident { #(#idents: #initials),* } })
            }
            (Fields::Named(_), None) => {
                return Err(syn::Error::new(
                    variant.span(),
                    "ReadJson reads data variants only in an internally tagged enum (`serde(tag = \"...\")`)",
                ));
            }
            (Fields::Unnamed(_), _) => {
                return Err(syn::Error::new(
                    variant.span(),
                    "ReadJson does not support tuple variants",
                ));
            }
        };
        placeholder.get_or_insert(unread);
        // The last arm takes every index left, so the match needs no unreachable arm.
        let pattern = if index == last {
            quote! { _ }
        } else {
            quote! { #index }
        };
        arms.push(quote! { #pattern => #value });
    }
    let which = match &container.tag {
        Some(tag) => quote! {
            let __fields = __value.object()?;
            let __variant = ::h123_shared::json::tagged(__fields, #tag, &[#(#names),*])?;
        },
        None => quote! {
            let __variant = ::h123_shared::json::variant(__value, &[#(#names),*])?;
        },
    };
    Ok(Body {
        read_in: quote! {
            #which
            *self = match __variant { #(#arms),* };
            ::core::result::Result::Ok(())
        },
        placeholder: placeholder.unwrap_or_default(),
        missing: None,
    })
}

/// A serde case convention this reader knows (the ones h123's schema uses).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Case {
    Lower,
    Upper,
    Snake,
}

impl Case {
    fn parse(name: &LitStr) -> syn::Result<Case> {
        match name.value().as_str() {
            "lowercase" => Ok(Case::Lower),
            "UPPERCASE" => Ok(Case::Upper),
            "snake_case" => Ok(Case::Snake),
            other => Err(syn::Error::new(
                name.span(),
                format!(
                    "ReadJson does not support `rename_all = \"{other}\"` (only lowercase, UPPERCASE, snake_case)"
                ),
            )),
        }
    }

    /// A variant's name (`PascalCase` in Rust) under this convention, as serde spells it.
    fn variant(self, name: &str) -> String {
        match self {
            Case::Lower => name.to_ascii_lowercase(),
            Case::Upper => name.to_ascii_uppercase(),
            Case::Snake => {
                let mut snake = String::new();
                for (i, c) in name.char_indices() {
                    if i > 0 && c.is_uppercase() {
                        snake.push('_');
                    }
                    snake.push(c.to_ascii_lowercase());
                }
                snake
            }
        }
    }

    /// A field's name (`snake_case` in Rust) under this convention, as serde spells it.
    fn field(self, name: &str) -> String {
        match self {
            Case::Lower | Case::Snake => name.to_owned(),
            Case::Upper => name.to_ascii_uppercase(),
        }
    }
}

/// A struct's or an enum's serde attributes.
#[derive(Default)]
struct Container {
    rename_all: Option<Case>,
    default: bool,
    transparent: bool,
    tag: Option<LitStr>,
}

impl Container {
    fn parse(attrs: &[Attribute]) -> syn::Result<Container> {
        let mut container = Container::default();
        each_serde(attrs, |meta, name| {
            match name {
                "rename_all" => container.rename_all = Some(Case::parse(&string(meta)?)?),
                "default" => container.default = word(meta)?,
                "transparent" => container.transparent = word(meta)?,
                "tag" => container.tag = Some(string(meta)?),
                // Says nothing about reading: unknown fields are always ignored.
                "deny_unknown_fields" => {
                    word(meta)?;
                }
                _ => return Ok(false),
            }
            Ok(true)
        })?;
        Ok(container)
    }

    fn refuse_tag(&self, input: &DeriveInput) -> syn::Result<()> {
        match &self.tag {
            Some(tag) => Err(syn::Error::new(
                tag.span(),
                format!(
                    "ReadJson supports `serde(tag)` on enums only ({})",
                    input.ident
                ),
            )),
            None => Ok(()),
        }
    }
}

/// A field's serde attributes.
#[derive(Default)]
struct FieldAttrs {
    rename: Option<String>,
    default: bool,
    flatten: bool,
}

impl FieldAttrs {
    fn parse(attrs: &[Attribute]) -> syn::Result<FieldAttrs> {
        let mut field = FieldAttrs::default();
        each_serde(attrs, |meta, name| {
            match name {
                "rename" => field.rename = Some(string(meta)?.value()),
                "default" => field.default = word(meta)?,
                "flatten" => field.flatten = word(meta)?,
                // Says nothing about reading.
                "skip_serializing_if" => {
                    string(meta)?;
                }
                _ => return Ok(false),
            }
            Ok(true)
        })?;
        Ok(field)
    }
}

/// A variant's `rename`, its one serde attribute this reader supports.
fn variant_rename(attrs: &[Attribute]) -> syn::Result<Option<String>> {
    let mut rename = None;
    each_serde(attrs, |meta, name| {
        if name != "rename" {
            return Ok(false);
        }
        rename = Some(string(meta)?.value());
        Ok(true)
    })?;
    Ok(rename)
}

/// Calls `known(meta, name)` for every item of every `#[serde(...)]` in `attrs`; an item it
/// does not take (`Ok(false)`) is a compile error naming it.
fn each_serde(
    attrs: &[Attribute],
    mut known: impl FnMut(&ParseNestedMeta<'_>, &str) -> syn::Result<bool>,
) -> syn::Result<()> {
    for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        attr.parse_nested_meta(|meta| {
            let name = meta
                .path
                .get_ident()
                .map(Ident::to_string)
                .unwrap_or_default();
            if known(&meta, &name)? {
                return Ok(());
            }
            Err(meta.error(format!(
                "ReadJson does not support `serde({name})` here: teach h123-json-derive its meaning first"
            )))
        })?;
    }
    Ok(())
}

/// The string of `name = "..."`.
fn string(meta: &ParseNestedMeta<'_>) -> syn::Result<LitStr> {
    if !meta.input.peek(Token![=]) {
        return Err(meta.error("ReadJson supports this serde attribute only as `name = \"...\"`"));
    }
    meta.value()?.parse()
}

/// A bare word such as `default` (not `default = "path"`): always `true`.
fn word(meta: &ParseNestedMeta<'_>) -> syn::Result<bool> {
    if meta.input.is_empty() || meta.input.peek(Token![,]) {
        return Ok(true);
    }
    Err(meta.error("ReadJson supports this serde attribute only as a bare word"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The compile error `expand` gives for `item`.
    fn refused(item: &str) -> String {
        let input: DeriveInput = syn::parse_str(item).unwrap();
        match expand(&input) {
            Ok(tokens) => panic!("expanded: {tokens}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn unknown_serde_attributes_are_compile_errors_naming_them() {
        for (item, named) in [
            ("#[serde(untagged)] enum A { B(u32) }", "serde(untagged)"),
            (
                "struct A { #[serde(alias = \"b\")] a: u32 }",
                "serde(alias)",
            ),
            (
                "struct A { #[serde(deserialize_with = \"f\")] a: u32 }",
                "serde(deserialize_with)",
            ),
            ("struct A { #[serde(skip)] a: u32 }", "serde(skip)"),
            ("enum A { #[serde(other)] B }", "serde(other)"),
            ("enum A { #[serde(alias = \"c\")] B }", "serde(alias)"),
            // Right name, wrong place.
            ("struct A { #[serde(tag = \"t\")] a: u32 }", "serde(tag)"),
            ("#[serde(flatten)] struct A { a: u32 }", "serde(flatten)"),
        ] {
            let error = refused(item);
            assert!(error.contains(named), "{item}: {error}");
        }
    }

    #[test]
    fn unsupported_forms_and_shapes_are_compile_errors() {
        for (item, says) in [
            (
                "#[serde(rename_all = \"camelCase\")] enum A { B }",
                "rename_all = \"camelCase\"",
            ),
            (
                "struct A { #[serde(default = \"zero\")] a: u32 }",
                "bare word",
            ),
            (
                "struct A { #[serde(rename(deserialize = \"b\"))] a: u32 }",
                "name = \"...\"",
            ),
            ("struct A<T> { a: T }", "generic"),
            ("struct A(u32);", "transparent"),
            ("enum A { B(u32) }", "tuple variants"),
            ("enum A { B { c: u32 } }", "internally tagged"),
            ("#[serde(tag = \"t\")] struct A { a: u32 }", "enums only"),
            ("enum A {}", "without variants"),
            (
                "struct A { #[serde(flatten, default)] a: B }",
                "`serde(flatten)` alone",
            ),
        ] {
            let error = refused(item);
            assert!(error.contains(says), "{item}: {error}");
        }
    }

    #[test]
    fn cases_spell_names_as_serde_does() {
        assert_eq!(Case::Snake.variant("DoneWithErrors"), "done_with_errors");
        assert_eq!(Case::Snake.variant("H3"), "h3");
        assert_eq!(Case::Lower.variant("Socks5h"), "socks5h");
        assert_eq!(Case::Upper.variant("Options"), "OPTIONS");
        assert_eq!(Case::Snake.field("max_age_s"), "max_age_s");
        assert_eq!(Case::Upper.field("max_age_s"), "MAX_AGE_S");
    }
}
