//! The part of Redis's module API this module calls, fetched by name at load as
//! `RedisModule_Init` (redismodule.h) does: Redis hands the module a context whose first word
//! is `RedisModule_GetApi`, and every other function is asked of it. Written by hand, so the
//! build needs neither Redis's headers nor libclang.

use std::ffi::{c_char, c_int, c_long, c_longlong, c_void, CStr};
use std::sync::OnceLock;

/// A Redis module context (`RedisModuleCtx`), opaque.
pub(crate) type Ctx = c_void;
/// A Redis string (`RedisModuleString`), opaque.
pub(crate) type RString = c_void;
/// An open key (`RedisModuleKey`), opaque.
pub(crate) type Key = c_void;
/// A command's handle (`RedisModuleCommand`), opaque.
pub(crate) type Command = c_void;

/// `REDISMODULE_OK`.
pub(crate) const OK: c_int = 0;
/// `REDISMODULE_ERR`.
pub(crate) const ERR: c_int = 1;
/// `REDISMODULE_READ`: opening a key to read it.
pub(crate) const READ: c_int = 1;
/// `REDISMODULE_WRITE`: opening a key to write it.
pub(crate) const WRITE: c_int = 2;
/// `REDISMODULE_KEYTYPE_EMPTY`: no such key.
pub(crate) const KEYTYPE_EMPTY: c_int = 0;
/// `REDISMODULE_KEYTYPE_STRING`.
pub(crate) const KEYTYPE_STRING: c_int = 1;
/// Keyspace event class `g` (`notify-keyspace-events`).
pub(crate) const NOTIFY_GENERIC: c_int = 1 << 2;
/// Keyspace event class `$`.
pub(crate) const NOTIFY_STRING: c_int = 1 << 3;
/// The version of the API `SetModuleAttribs` is told.
pub(crate) const APIVER_1: c_int = 1;

/// A command's implementation, as `RedisModule_CreateCommand` takes it.
pub(crate) type CommandFn = unsafe extern "C" fn(*mut Ctx, *mut *mut RString, c_int) -> c_int;

/// The functions, resolved once at load. Those Redis added after 7.0 are `Option`s.
pub(crate) struct Api {
    /// `RedisModule_CreateCommand`.
    pub(crate) create_command: unsafe extern "C" fn(
        *mut Ctx,
        *const c_char,
        CommandFn,
        *const c_char,
        c_int,
        c_int,
        c_int,
    ) -> c_int,
    /// `RedisModule_SetModuleAttribs`.
    pub(crate) set_module_attribs: unsafe extern "C" fn(*mut Ctx, *const c_char, c_int, c_int),
    /// `RedisModule_WrongArity`.
    pub(crate) wrong_arity: unsafe extern "C" fn(*mut Ctx) -> c_int,
    /// `RedisModule_StringPtrLen`.
    pub(crate) string_ptr_len: unsafe extern "C" fn(*const RString, *mut usize) -> *const c_char,
    /// `RedisModule_OpenKey`.
    pub(crate) open_key: unsafe extern "C" fn(*mut Ctx, *mut RString, c_int) -> *mut Key,
    /// `RedisModule_CloseKey`.
    pub(crate) close_key: unsafe extern "C" fn(*mut Key),
    /// `RedisModule_KeyType`.
    pub(crate) key_type: unsafe extern "C" fn(*mut Key) -> c_int,
    /// `RedisModule_ValueLength`: a string's length, read without touching the value.
    pub(crate) value_length: unsafe extern "C" fn(*mut Key) -> usize,
    /// `RedisModule_StringDMA`.
    pub(crate) string_dma: unsafe extern "C" fn(*mut Key, *mut usize, c_int) -> *mut c_char,
    /// `RedisModule_StringTruncate`.
    pub(crate) string_truncate: unsafe extern "C" fn(*mut Key, usize) -> c_int,
    /// `RedisModule_SetExpire`.
    pub(crate) set_expire: unsafe extern "C" fn(*mut Key, c_longlong) -> c_int,
    /// `RedisModule_GetAbsExpire`.
    pub(crate) get_abs_expire: unsafe extern "C" fn(*mut Key) -> c_longlong,
    /// `RedisModule_ReplyWithArray`.
    pub(crate) reply_with_array: unsafe extern "C" fn(*mut Ctx, c_long) -> c_int,
    /// `RedisModule_ReplyWithStringBuffer`.
    pub(crate) reply_with_string_buffer:
        unsafe extern "C" fn(*mut Ctx, *const c_char, usize) -> c_int,
    /// `RedisModule_ReplyWithError`.
    pub(crate) reply_with_error: unsafe extern "C" fn(*mut Ctx, *const c_char) -> c_int,
    /// `RedisModule_Replicate`.
    pub(crate) replicate:
        unsafe extern "C" fn(*mut Ctx, *const c_char, *const c_char, ...) -> c_int,
    /// `RedisModule_NotifyKeyspaceEvent`.
    pub(crate) notify_keyspace_event:
        unsafe extern "C" fn(*mut Ctx, c_int, *const c_char, *mut RString) -> c_int,
    /// `RedisModule_Log`.
    pub(crate) log: unsafe extern "C" fn(*mut Ctx, *const c_char, *const c_char, ...),
    /// `RedisModule_Alloc`, `RedisModule_Calloc`, `RedisModule_Realloc`, `RedisModule_Free`:
    /// Redis's allocator, which `used_memory` and `maxmemory` count.
    pub(crate) alloc: crate::alloc::RedisHeap,
    /// `RedisModule_GetCommand` (Redis 7.0 and later).
    pub(crate) get_command: Option<unsafe extern "C" fn(*mut Ctx, *const c_char) -> *mut Command>,
    /// `RedisModule_SetCommandACLCategories` (Redis 7.2 and later).
    pub(crate) set_command_acl_categories:
        Option<unsafe extern "C" fn(*mut Command, *const c_char) -> c_int>,
    /// `RedisModule_AddACLCategory` (Redis 7.4 and later).
    pub(crate) add_acl_category: Option<unsafe extern "C" fn(*mut Ctx, *const c_char) -> c_int>,
}

static API: OnceLock<Api> = OnceLock::new();

/// The API, once [`load`] has resolved it (always, before Redis runs a command of ours).
pub(crate) fn api() -> Option<&'static Api> {
    API.get()
}

/// `RedisModule_GetApi`: a function's address by name.
type GetApi = unsafe extern "C" fn(*const c_char, *mut c_void) -> c_int;

/// The function `name` as type `F` (a function pointer of its C signature), or `None` when
/// this Redis has no such function.
///
/// # Safety
/// `F` must be the function pointer type of `name`'s C declaration in redismodule.h.
unsafe fn get<F: Copy>(get_api: GetApi, name: &CStr) -> Option<F> {
    debug_assert_eq!(size_of::<F>(), size_of::<*mut c_void>());
    let mut ptr: *mut c_void = std::ptr::null_mut();
    // SAFETY: `get_api` is Redis's `RedisModule_GetApi`, which writes one pointer through
    // its second argument, a valid `*mut *mut c_void` here.
    let found = unsafe { get_api(name.as_ptr(), (&mut ptr as *mut *mut c_void).cast()) };
    if found != OK || ptr.is_null() {
        return None;
    }
    // SAFETY: `ptr` is the non-null address of `name`, whose type is `F` (the caller's
    // contract); a function pointer and a data pointer have one size and representation on
    // every platform Redis runs on.
    Some(unsafe { std::mem::transmute_copy::<*mut c_void, F>(&ptr) })
}

/// Resolves every function from the context Redis passed to `RedisModule_OnLoad`; `None`
/// when this Redis lacks one that is not optional (older than 7.0). Allocates nothing: it
/// runs before the module's allocator is pointed at Redis's.
///
/// # Safety
/// `ctx` must be the context of `RedisModule_OnLoad`.
pub(crate) unsafe fn load(ctx: *mut Ctx) -> Option<&'static Api> {
    // SAFETY: the first word of a module context is `RedisModule_GetApi` (redismodule.h's
    // `RedisModule_Init` reads it the same way); `ctx` is valid for the call (the caller's
    // contract).
    let get_api: GetApi =
        unsafe { std::mem::transmute::<*const c_void, GetApi>(*(ctx as *const *const c_void)) };
    // SAFETY: each field's type is its function's C signature in redismodule.h, as `get`
    // requires.
    let api = unsafe {
        Api {
            create_command: get(get_api, c"RedisModule_CreateCommand")?,
            set_module_attribs: get(get_api, c"RedisModule_SetModuleAttribs")?,
            wrong_arity: get(get_api, c"RedisModule_WrongArity")?,
            string_ptr_len: get(get_api, c"RedisModule_StringPtrLen")?,
            open_key: get(get_api, c"RedisModule_OpenKey")?,
            close_key: get(get_api, c"RedisModule_CloseKey")?,
            key_type: get(get_api, c"RedisModule_KeyType")?,
            value_length: get(get_api, c"RedisModule_ValueLength")?,
            string_dma: get(get_api, c"RedisModule_StringDMA")?,
            string_truncate: get(get_api, c"RedisModule_StringTruncate")?,
            set_expire: get(get_api, c"RedisModule_SetExpire")?,
            get_abs_expire: get(get_api, c"RedisModule_GetAbsExpire")?,
            reply_with_array: get(get_api, c"RedisModule_ReplyWithArray")?,
            reply_with_string_buffer: get(get_api, c"RedisModule_ReplyWithStringBuffer")?,
            reply_with_error: get(get_api, c"RedisModule_ReplyWithError")?,
            replicate: get(get_api, c"RedisModule_Replicate")?,
            notify_keyspace_event: get(get_api, c"RedisModule_NotifyKeyspaceEvent")?,
            log: get(get_api, c"RedisModule_Log")?,
            alloc: crate::alloc::RedisHeap {
                alloc: get(get_api, c"RedisModule_Alloc")?,
                calloc: get(get_api, c"RedisModule_Calloc")?,
                realloc: get(get_api, c"RedisModule_Realloc")?,
                free: get(get_api, c"RedisModule_Free")?,
            },
            get_command: get(get_api, c"RedisModule_GetCommand"),
            set_command_acl_categories: get(get_api, c"RedisModule_SetCommandACLCategories"),
            add_acl_category: get(get_api, c"RedisModule_AddACLCategory"),
        }
    };
    let _ = API.set(api);
    API.get()
}
